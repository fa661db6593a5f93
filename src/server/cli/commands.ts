// The operator's commands of `partner-api`, one table: each noun's commands live in its own file
// (merchant-commands.ts, withdrawal-commands.ts, ...), each entry with its words, its own flags, an
// example and what it runs. Adding a command or a flag is an edit there; parsing, help and errors are in
// ../cli.ts; what every command is made of is in command.ts.
import { ADDRESS_COMMANDS } from './address-commands.js';
import { CALLBACK_COMMANDS } from './callback-commands.js';
import { CHAIN_COMMANDS } from './chain-commands.js';
import type { Command } from './command.js';
import { LEDGER_COMMANDS } from './ledger-commands.js';
import { MERCHANT_COMMANDS } from './merchant-commands.js';
import { PAYOUT_COMMANDS } from './payout-commands.js';
import { SERVE_COMMANDS } from './serve-command.js';
import { WITHDRAWAL_COMMANDS } from './withdrawal-commands.js';

export type { Command, FlagSpec, Io } from './command.js';

export const COMMANDS: Command[] = [
  ...SERVE_COMMANDS,
  ...MERCHANT_COMMANDS,
  ...WITHDRAWAL_COMMANDS,
  ...PAYOUT_COMMANDS,
  ...LEDGER_COMMANDS,
  ...CALLBACK_COMMANDS,
  ...CHAIN_COMMANDS,
  ...ADDRESS_COMMANDS,
];
