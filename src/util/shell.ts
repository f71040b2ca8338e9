/** POSIX shell quoting: the one way any command line gets built from words. Pure. */

const SAFE_WORD = /^[A-Za-z0-9_./:=@%+,-]+$/;

/** One word for `sh`: as is when it has only safe characters, else single-quoted. */
export function shellQuote(word: string): string {
  const w = String(word);
  if (w !== '' && SAFE_WORD.test(w)) return w;
  return `'${w.replace(/'/g, `'\\''`)}'`;
}
