// One classification of callback destinations (issue 9, item 11): the same function judges a
// callbackUrl when an order is created and every address a delivery would connect to.
import { describe, expect, it } from 'vitest';
import { callbackLookup, callbackPolicy, callbackUrlProblem, isLoopbackAddress, isNonPublicAddress, publicOnlyLookup } from '../../../src/server/callbacks/destinations.js';

describe('non-public addresses', () => {
  it.each([
    // IPv4: private, shared, loopback, link-local, documentation, benchmarking, multicast, reserved
    '127.0.0.1', '10.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '192.0.0.8', '192.0.2.1', '198.51.100.7', '203.0.113.9', '192.88.99.1', '198.18.0.1', '224.0.0.1', '255.255.255.255',
    // IPv6 and the forms that embed IPv4
    '::1', '::', '::7f00:1', '::127.0.0.1', '::a9fe:a9fe', 'fe80::1', 'fe80::1%eth0', 'fec0::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
    '::ffff:10.0.0.1', '::ffff:a00:1', '::ffff:7f00:1', '64:ff9b::a9fe:a9fe', '64:ff9b::127.0.0.1', '64:ff9b:1::8.8.8.8',
    '2002:7f00:1::', '2002:a9fe:a9fe::1', '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:db8::1', '3fff::1', '100::1',
    // issue 23 (10): SIIT's IPv4-translated ::ffff:0:0:0/96 (127.0.0.1, the metadata service), SRv6 SIDs
    '::ffff:0:7f00:1', '::ffff:0:127.0.0.1', '::ffff:0:a9fe:a9fe', '::ffff:0:169.254.169.254', '::ffff:0:808:808', '5f00::1', '5f00:1234::7f00:1',
    // the rest of the IANA special-purpose registry outside global unicast, and space never assigned
    '100:0:0:1::1', '64:ff9b:1:ffff::1', '4000::1', 'c000::1', 'e000::1', 'fe00::1', '1::1', '::2', '0:0:0:1::',
    // inside 2000::/3: benchmarking, ORCHIDv2, documentation
    '2001:2::1', '2001:20::1', '2001:db8:ffff::1', '3fff:fff::1',
  ])('%s is not public', (ip) => expect(isNonPublicAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:808:808', '64:ff9b::808:808', '2002:808:808::1', '2a00:1450:4001::200e'])(
    '%s is public',
    (ip) => expect(isNonPublicAddress(ip)).toBe(false),
  );
});

describe('callback URLs', () => {
  const live = callbackPolicy('live', false);
  const sandbox = callbackPolicy('sandbox', false);
  const privateAllowed = callbackPolicy('sandbox', true);

  it('keep to https and public hosts in live mode', () => {
    expect(callbackUrlProblem('https://merchant.example/cb', live)).toBeUndefined();
    expect(callbackUrlProblem('http://merchant.example/cb', live)).toMatch(/https/);
    for (const url of [
      'https://[::ffff:10.0.0.1]/cb', 'https://[::7f00:1]/', 'https://[2002:7f00:1::]/', 'https://[64:ff9b::7f00:1]/', 'https://[2001::1]/',
      'https://[fec0::1]/', 'https://192.0.2.1/', 'https://2130706433/', 'https://0x7f.1/', 'https://app.localhost/cb', 'https://localhost./cb', 'https://LOCALHOST../cb',
    ]) {
      expect(callbackUrlProblem(url, live), url).toMatch(/private/);
    }
  });

  it('may be plain http in the sandbox, and local only when the operator allows private callbacks', () => {
    expect(callbackUrlProblem('http://127.0.0.1:9000/cb', privateAllowed)).toBeUndefined();
    expect(callbackUrlProblem('http://127.0.0.1:9000/cb', sandbox)).toMatch(/private/);
    expect(callbackUrlProblem('http://merchant.example/cb', sandbox)).toBeUndefined();
    expect(callbackUrlProblem('https://u:p@merchant.example/cb', privateAllowed)).toMatch(/password/);
    expect(callbackUrlProblem('ftp://merchant.example/cb', privateAllowed)).toMatch(/https/);
  });

  it('refuses names that resolve only inside a network in live mode, at once, and accepts the never-resolving examples', () => {
    for (const url of ['https://intranet/cb', 'https://printer.local/cb', 'https://shop.internal/cb', 'https://metadata.google.internal/computeMetadata/v1/', 'https://nas.home.arpa/cb', 'https://intranet./cb']) {
      expect(callbackUrlProblem(url, live), url).toMatch(/private/);
      expect(callbackUrlProblem(url, sandbox), url).toBeUndefined();
    }
    for (const url of ['https://merchant.example/cb', 'https://shop.test/cb', 'https://api.shop.com/cb']) expect(callbackUrlProblem(url, live), url).toBeUndefined();
  });

  it('refuses the SIIT and SRv6 forms of loopback and the metadata service in every mode', () => {
    for (const url of ['https://[::ffff:0:127.0.0.1]/cb', 'https://[::ffff:0:a9fe:a9fe]/latest/meta-data/', 'https://[5f00::1]/cb']) {
      expect(callbackUrlProblem(url, live), url).toMatch(/private/);
      expect(callbackUrlProblem(url, sandbox), url).toMatch(/private/);
    }
  });
});

describe('the delivery lookup', () => {
  const resolve = (host: string, all = false) =>
    new Promise<{ error: Error | null; address: unknown }>((done) => publicOnlyLookup(host, { all }, (error, address) => done({ error, address })));

  it('refuses a name that resolves to a non-public address, in both callback forms', async () => {
    // An address literal: the system answers it without a query.
    expect((await resolve('127.0.0.1')).error?.message).toMatch(/has no public address/);
    expect((await resolve('::1', true)).error?.message).toMatch(/has no public address/);
  });

  it('fails a special-use name without asking any resolver: the answer comes before the call returns', () => {
    for (const host of ['merchant.example', 'shop.test', 'x.invalid', 'localhost', 'a.localhost', 'printer.local', 'abc.onion', 'db.internal', 'router.home.arpa', 'MERCHANT.EXAMPLE.']) {
      let answered: Error | null | undefined;
      publicOnlyLookup(host, { all: true }, (error) => (answered = error));
      expect(answered?.message, host).toMatch(/special-use name, never on the public internet: not looked up/);
    }
    // Anything else goes to the system's lookup, which answers later (an address literal: no query).
    let answered: unknown = 'none yet';
    publicOnlyLookup('127.0.0.1', { all: true }, () => (answered = 'answered'));
    expect(answered).toBe('none yet');
  });
});

describe('the delivery lookup with private destinations allowed (ALLOW_PRIVATE_CALLBACKS)', () => {
  const lookup = callbackLookup(callbackPolicy('sandbox', true));

  it('still fails a special-use name without asking any resolver: the setting opens private addresses, not names that never resolve', () => {
    for (const host of ['merchant.example', 'shop.test', 'x.invalid', 'printer.local', 'db.internal']) {
      let answered: Error | null | undefined;
      lookup(host, { all: true }, (error) => (answered = error));
      expect(answered?.message, host).toMatch(/special-use name, never on the public internet: not looked up/);
    }
  });

  it('resolves localhost and loopback addresses, and lets them through', async () => {
    for (const host of ['localhost', '127.0.0.1']) {
      const { error } = await new Promise<{ error: Error | null }>((done) => lookup(host, { all: true }, (e) => done({ error: e })));
      expect(error, host).toBeNull();
    }
  });
});


// Issue 49 (1): a loopback-only sandbox (config.ts, loopbackOnlySandbox) lets callbacks reach this
// machine, and nothing else that is not public.
describe('callbacks in a loopback-only sandbox', () => {
  const loopbackOnly = callbackPolicy('sandbox', false, true);

  it('knows loopback from the other non-public addresses', () => {
    for (const ip of ['127.0.0.1', '127.255.0.9', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:2']) expect(isLoopbackAddress(ip), ip).toBe(true);
    // SIIT, NAT64 and 6to4 forms are translated off the machine; 0.0.0.0 and :: are "this network".
    for (const ip of ['10.0.0.1', '169.254.169.254', '0.0.0.0', '::', '::ffff:0:7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::', 'fe80::1', '8.8.8.8', 'localhost']) {
      expect(isLoopbackAddress(ip), ip).toBe(false);
    }
  });

  it('accepts receivers on loopback and localhost, and refuses every other private, link-local or reserved one', () => {
    for (const url of ['http://127.0.0.1:9000/cb', 'http://[::1]:9000/cb', 'http://localhost:9000/cb', 'http://shop.localhost/cb', 'http://[::ffff:127.0.0.1]/cb']) {
      expect(callbackUrlProblem(url, loopbackOnly), url).toBeUndefined();
    }
    for (const url of ['http://10.0.0.1/cb', 'http://192.168.1.1/cb', 'http://169.254.169.254/latest/meta-data/', 'http://[fd00::1]/cb', 'http://[::ffff:10.0.0.1]/cb', 'http://0.0.0.0:9000/cb', 'http://[::ffff:0:7f00:1]/cb']) {
      expect(callbackUrlProblem(url, loopbackOnly), url).toMatch(/private/);
    }
  });

  it('counts in the sandbox only: live mode opens loopback with ALLOW_PRIVATE_CALLBACKS alone', () => {
    expect(callbackUrlProblem('https://127.0.0.1:9000/cb', callbackPolicy('live', false, true))).toMatch(/private/);
    expect(callbackUrlProblem('https://127.0.0.1:9000/cb', callbackPolicy('live', true))).toBeUndefined();
  });

  it('looks localhost up at delivery, and lets a name through only when every address is loopback', async () => {
    const lookup = callbackLookup(loopbackOnly);
    const resolved = (host: string) => new Promise<{ error: Error | null; address: unknown }>((done) => lookup(host, { all: true }, (error, address) => done({ error, address })));
    const local = await resolved('localhost');
    expect(local.error).toBeNull();
    expect((local.address as { address: string }[]).every((a) => isLoopbackAddress(a.address))).toBe(true);
    expect((await resolved('127.0.0.1')).error).toBeNull();
    // Other special-use names are still failed without a query.
    let answered: Error | null | undefined;
    lookup('merchant.example', { all: true }, (error) => (answered = error));
    expect(answered?.message).toMatch(/special-use name/);
  });
});
