// The address thread (see thread.ts): derives deposit addresses and draws their QR codes.
import { parentPort, workerData } from 'node:worker_threads';
import { createAddressDeriver } from './derivation.js';
import type { Network } from '../shared/network.js';
import { STOP, type AddressReply, type AddressRequest, type IssuedAddress } from './thread.js';
import { addressQr } from './qr.js';

const xpubs = workerData as Record<Network, string>;
const derive: Record<Network, (index: number) => string> = {
  Tron: createAddressDeriver('Tron', xpubs.Tron),
  Ethereum: createAddressDeriver('Ethereum', xpubs.Ethereum),
};

function issue(network: Network, index: number): IssuedAddress | string {
  try {
    const address = derive[network](index);
    return { address, qr: addressQr(address) };
  } catch (error) {
    return (error as Error).message;
  }
}

parentPort!.on('message', (message: AddressRequest | typeof STOP) => {
  if (message === STOP) return parentPort!.close();
  const [id, indexes] = message;
  const reply: AddressReply = [id, indexes.map(([network, index]) => issue(network, index))];
  parentPort!.postMessage(reply);
});
