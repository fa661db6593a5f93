// The hot wallets' low-balance thresholds (issue 54 item 4): smallest units, as every amount setting, read
// exactly (wei well past 2^53), unset meaning none; anything but a whole number is refused, naming the setting.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/server/config.js';
import { testConfig } from '../../support/platform.js';

describe('ETHEREUM_LOW_BALANCE_* and TRON_LOW_BALANCE_*', () => {
  it('are read exactly in smallest units, each network and asset on its own; unset, none', () => {
    const config = testConfig({ ETHEREUM_LOW_BALANCE_USDT: '500000000', ETHEREUM_LOW_BALANCE_ETH: '1234567890123456789012', TRON_LOW_BALANCE_TRX: '500000000' });
    expect(config.payouts.lowBalance).toEqual({ Ethereum: { token: 500_000_000n, gas: 1_234_567_890_123_456_789_012n }, Tron: { gas: 500_000_000n } });
    expect(testConfig().payouts.lowBalance).toEqual({ Ethereum: {}, Tron: {} });
  });

  it.each(['0.5', '-1', '1e18', 'ten', '1'.repeat(31)])('refuses %s, naming the setting and its units', (value) => {
    expect(() => testConfig({ TRON_LOW_BALANCE_USDT: value })).toThrow(ConfigError);
    expect(() => testConfig({ TRON_LOW_BALANCE_USDT: value })).toThrow(/^TRON_LOW_BALANCE_USDT must be a whole number of smallest units/);
  });
});
