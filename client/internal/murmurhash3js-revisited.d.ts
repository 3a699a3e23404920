// Types for the untyped `murmurhash3js-revisited` package (only what the client uses).
declare module 'murmurhash3js-revisited' {
  export const x86: { hash32(bytes: Uint8Array, seed?: number): number };
}
