// The two networks, spelled as in the contract. Here rather than in addresses/ so that the settings
// (config.ts) can name them without importing a capability folder.
export type Network = 'Tron' | 'Ethereum';

/** Both, in the order the platform lists them (balances, settings). */
export const NETWORKS: readonly Network[] = ['Tron', 'Ethereum'];
