// The address thread: the addresses of the test wallets, QR codes that decode to them, an error for
// an index that has none, a stop that lets it finish its work, and a new thread after one is gone.
import { afterAll, describe, expect, it } from 'vitest';
import { AddressThread, type IssuedAddress } from '../../../src/server/addresses/thread.js';
import { MAX_ADDRESS_INDEX } from '../../../src/server/addresses/derivation.js';
import { hdVectors } from '../../fixtures/vectors.js';
import { decodeQr } from '../../support/qr.js';

const wallet = hdVectors.wallets[0]!;
const thread = new AddressThread({ Tron: wallet.Tron.xpub, Ethereum: wallet.Ethereum.xpub });
afterAll(() => thread.close());

describe('AddressThread', () => {
  it('issues the test wallets’ addresses in the order asked, each with a QR code that decodes to it', async () => {
    const indexes = wallet.Tron.addresses.flatMap((_, i) => [['Tron', i] as const, ['Ethereum', i] as const]);
    const issued = (await thread.issue(indexes)) as IssuedAddress[];
    expect(issued.map((one) => one.address)).toEqual(wallet.Tron.addresses.flatMap((tron, i) => [tron, wallet.Ethereum.addresses[i]]));
    for (const { address, qr } of issued) expect(decodeQr(qr)).toBe(address);
  });

  it('answers an index outside the range with a RangeError and still issues the others of its batch', async () => {
    const [bad, good] = await thread.issue([['Tron', MAX_ADDRESS_INDEX + 1], ['Tron', 0]]);
    expect(bad).toBeInstanceOf(RangeError);
    expect((bad as Error).message).toMatch(/out of range/);
    expect((good as IssuedAddress).address).toBe(wallet.Tron.addresses[0]);
  });

  it('answers everything it was asked before it stops, and starts a new thread for the next request', async () => {
    // A batch of a good fraction of a second's work: the thread is drawing it when close() is called.
    // Terminating it there could abort the whole process (a thread stopped inside deflateSync).
    const indexes = Array.from({ length: 2000 }, (_, index) => ['Ethereum', index] as const);
    const waiting = thread.issue(indexes);
    await thread.close();
    const issued = (await waiting) as IssuedAddress[];
    expect(issued).toHaveLength(2000);
    expect(issued.slice(0, 3).map((one) => one.address)).toEqual(wallet.Ethereum.addresses.slice(0, 3));
    const [again] = await thread.issue([['Ethereum', 1]]);
    expect((again as IssuedAddress).address).toBe(wallet.Ethereum.addresses[1]);
  });

  it('fails what is waiting when the thread dies, and starts a new thread for the next request', async () => {
    // A message the thread cannot read throws on the thread, outside any catch: the thread dies.
    await expect(thread.issue(null as never)).rejects.toThrow(/Cannot read|not iterable|null/);
    const [again] = await thread.issue([['Tron', 2]]);
    expect((again as IssuedAddress).address).toBe(wallet.Tron.addresses[2]);
  });
});
