// The Redocly CLI with its arguments, its exit code and its output, less the boxed notice it prints on
// stderr at every command on Node 20 ("Node.js 20 support is ending"): CI runs on Node 20 on purpose
// (the machines' Node; Node 24 too), and ten boxes in npm test's output hid what mattered.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';

const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
const child = spawn(process.execPath, [cli, ...process.argv.slice(2)], { stdio: ['inherit', 'inherit', 'pipe'] });
const BOX = /^\s*[╔║╚]/;
createInterface({ input: child.stderr }).on('line', (line) => {
  if (!BOX.test(line)) process.stderr.write(line + '\n');
});
child.on('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
