// What a delivery attempt's error tells the merchant (issue 50, item 6): its kind, and a message that
// never holds an address the platform resolved the URL's host to.
import { describe, expect, it } from 'vitest';
import { deliveryErrorKind, deliveryErrorMessage, DeliveryTimeoutError } from '../../../src/server/callbacks/delivery-errors.js';
import { NonPublicDestinationError, SpecialUseNameError } from '../../../src/server/callbacks/destinations.js';

/** An error as Node's net and dns modules make them (exceptionWithHostPort, dnsException). */
function systemError(message: string, fields: { code: string; syscall: string; address?: string; port?: number; hostname?: string }) {
  return Object.assign(new Error(message), fields);
}

const url = new URL('https://shop.merchant.example/callbacks');

describe('a delivery error as the merchant reads it', () => {
  it('says the same of a name that resolves only inside the network as of one that does not resolve', () => {
    const inside = new NonPublicDestinationError('shop.merchant.example', '10.1.2.3');
    const nowhere = systemError('getaddrinfo ENOTFOUND shop.merchant.example', { code: 'ENOTFOUND', syscall: 'getaddrinfo', hostname: 'shop.merchant.example' });
    const noAnswer = systemError('getaddrinfo EAI_AGAIN shop.merchant.example', { code: 'EAI_AGAIN', syscall: 'getaddrinfo', hostname: 'shop.merchant.example' });
    for (const error of [inside, nowhere, noAnswer]) {
      expect(deliveryErrorKind(error)).toBe('dns');
      expect(deliveryErrorMessage(error, url)).toBe('callback host shop.merchant.example has no public address');
    }
  });

  it("names the URL's host and port, never the address a socket connected to", () => {
    const refused = systemError('connect ECONNREFUSED 10.1.2.3:443', { code: 'ECONNREFUSED', syscall: 'connect', address: '10.1.2.3', port: 443 });
    expect(deliveryErrorMessage(refused, url)).toBe('connect ECONNREFUSED shop.merchant.example:443');
    expect(deliveryErrorKind(refused)).toBe('connection_refused');
    const unreachable = systemError('connect EHOSTUNREACH fd00::7:8443', { code: 'EHOSTUNREACH', syscall: 'connect', address: 'fd00::7', port: 8443 });
    expect(deliveryErrorMessage(unreachable, new URL('http://shop.merchant.example:8443/cb'))).toBe('connect EHOSTUNREACH shop.merchant.example:8443');
    // Happy Eyeballs: every address tried, in one error.
    const both = new AggregateError([systemError('connect ECONNREFUSED ::1:80', { code: 'ECONNREFUSED', syscall: 'connect', address: '::1', port: 80 }), refused]);
    expect(deliveryErrorMessage(both, new URL('http://shop.merchant.example/cb'))).toBe('connect ECONNREFUSED shop.merchant.example:80');
    expect(deliveryErrorKind(both)).toBe('connection_refused');
  });

  it("keeps the platform's own words, judged from the URL alone", () => {
    expect(deliveryErrorMessage(new DeliveryTimeoutError('no answer within 15 s'), url)).toBe('no answer within 15 s');
    const special = new SpecialUseNameError('shop.example');
    expect([deliveryErrorKind(special), deliveryErrorMessage(special, url)]).toEqual(['destination_refused', special.message]);
    const cut = Object.assign(new Error('The operation was aborted'), { cause: new Error('cut short: every socket is held') });
    expect(deliveryErrorMessage(cut, url)).toBe('cut short: every socket is held');
  });
});
