// murmurhash3js (the package the Unleash Node SDK hashes with) ships no types.
declare module 'murmurhash3js' {
  const murmurHash3: {
    x86: {
      /** MurmurHash3 x86 32-bit of the string's UTF-16 code units masked to 8 bits, as an unsigned int. */
      hash32(key: string, seed?: number): number
    }
  }
  export default murmurHash3
}
