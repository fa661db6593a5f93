import { tronAddressToId, toChecksumAddress, type Network } from './addresses.js';

/** True for a Tron base58check address or an Ethereum hex address (EIP-55 checked when mixed case). */
export function isAddress(network: Network, address: string): boolean {
  if (network === 'Tron') {
    try {
      return tronAddressToId(address).length === 20;
    } catch {
      return false;
    }
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return false;
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  return toChecksumAddress(Uint8Array.from(Buffer.from(hex, 'hex'))) === address;
}
