/** The part of bmp-js's API (it ships no types) that test/support/ocr-fixtures.ts uses. */
declare module 'bmp-js' {
  interface BmpImage {
    /** Pixels as A,B,G,R bytes, row by row from the top. */
    data: Buffer;
    width: number;
    height: number;
  }

  const bmp: {
    encode(image: BmpImage, quality?: number): { data: Buffer; width: number; height: number };
    decode(buffer: Buffer): BmpImage;
  };
  export default bmp;
}
