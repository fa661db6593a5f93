#!/usr/bin/env node
// Runs the TypeScript sources through tsx, resolved from this package, so the command works from any directory.
import { register } from 'tsx/esm/api';

register();
await import('../src/server/cli.ts');
