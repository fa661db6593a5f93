// Every setting: its flag and its environment variable, gathered from each noun's table (server.ts,
// networks.ts, callbacks.ts, payouts.ts). A `secret` one (it carries a key or a password) has no flag,
// since every user of the machine can read a process's arguments: it comes from its environment variable
// or from the file that `<VARIABLE>_FILE` names.
import { readFileSync } from 'node:fs';
import { CALLBACK_SETTINGS } from './callbacks.js';
import { NETWORK_SETTINGS } from './networks.js';
import { PAYOUT_SETTINGS } from './payouts.js';
import { SERVER_SETTINGS } from './server.js';
import { ConfigError } from './values.js';

const SETTINGS = { ...SERVER_SETTINGS, ...NETWORK_SETTINGS, ...CALLBACK_SETTINGS, ...PAYOUT_SETTINGS } as const;

export type SettingName = keyof typeof SETTINGS;

export const SETTING_NAMES = Object.keys(SETTINGS) as SettingName[];

/** True for a setting given only by the environment or a file (see SETTINGS). */
export function isSecretSetting(name: SettingName): boolean {
  return 'secret' in SETTINGS[name];
}

/** The environment variable of a setting. */
export function settingEnv(name: SettingName): string {
  return SETTINGS[name].env;
}

/** A secret setting's value: its environment variable, else the file its `_FILE` variable names; never a flag. */
export function secretSetting(name: SettingName, flagValue: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const variable = SETTINGS[name].env;
  if (flagValue !== undefined) {
    throw new ConfigError(`--${name} is refused: a flag is readable by every user of the machine (ps, /proc/PID/cmdline); set ${variable} or ${variable}_FILE (a file holding the value) instead`);
  }
  if (env[variable]) return env[variable];
  const file = env[`${variable}_FILE`];
  if (!file) return undefined;
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch (error) {
    throw new ConfigError(`${variable}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
