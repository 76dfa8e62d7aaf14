import { Writable } from 'node:stream';

/** A log destination kept in memory: what a process logged, as text, for a test to read. */
export function memoryStream() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}
