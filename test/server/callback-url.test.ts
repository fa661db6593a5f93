import { describe, expect, it } from 'vitest';
import { callbackUrlProblem, isNonPublicAddress } from '../../src/server/http/callback-url.js';

describe('non-public addresses', () => {
  it.each([
    '127.0.0.1', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:10.0.0.1', '::ffff:a00:1', '::ffff:7f00:1', '64:ff9b::a9fe:a9fe',
  ])('%s is not public', (ip) => expect(isNonPublicAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:808:808'])('%s is public', (ip) =>
    expect(isNonPublicAddress(ip)).toBe(false),
  );
});

describe('callback URLs', () => {
  it('keep to https and public hosts in live mode', () => {
    expect(callbackUrlProblem('https://merchant.example/cb', 'live')).toBeUndefined();
    expect(callbackUrlProblem('http://merchant.example/cb', 'live')).toMatch(/https/);
    expect(callbackUrlProblem('https://[::ffff:10.0.0.1]/cb', 'live')).toMatch(/private/);
    expect(callbackUrlProblem('https://app.localhost/cb', 'live')).toMatch(/private/);
  });

  it('may be plain http and local in sandbox mode, but never carry credentials', () => {
    expect(callbackUrlProblem('http://127.0.0.1:9000/cb', 'sandbox')).toBeUndefined();
    expect(callbackUrlProblem('https://u:p@merchant.example/cb', 'sandbox')).toMatch(/password/);
    expect(callbackUrlProblem('ftp://merchant.example/cb', 'sandbox')).toMatch(/https/);
  });
});
