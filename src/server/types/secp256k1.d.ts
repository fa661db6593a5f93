// The part of `secp256k1` (cryptocoinjs: libsecp256k1 through N-API, prebuilt; elliptic where no
// binary loads) the platform uses for BIP32 public derivation. A CommonJS module: import its default.
declare module 'secp256k1' {
  const secp256k1: {
    /** The same point, serialized compressed (33 bytes) or not (65 bytes). */
    publicKeyConvert(publicKey: Uint8Array, compressed?: boolean): Uint8Array;
    /** publicKey + tweak·G; throws when the tweak is not below the curve order or the sum is infinity. */
    publicKeyTweakAdd(publicKey: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array;
  };
  export default secp256k1;
}
