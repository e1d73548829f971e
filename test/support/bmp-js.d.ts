/** The part of bmp-js's API (it ships no types) that test/support/ocr-fixtures.ts uses. */
declare module 'bmp-js' {
  interface BmpImage {
    /** Pixels as A,B,G,R bytes, row by row from the top. */
    data: Buffer;
    width: number;
    height: number;
  }

  function encode(image: BmpImage, quality?: number): { data: Buffer; width: number; height: number };
  function decode(buffer: Buffer): BmpImage;

  const bmp: { encode: typeof encode; decode: typeof decode };
  export default bmp;
}
