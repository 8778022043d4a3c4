// The signature thread's program (see src/signature-thread.ts). The calling thread reads and
// checks every folder itself and writes, for each signature to check, the statement bytes and
// the signature into a slot of shared memory, with the position of the trusted key to use. This
// thread takes the checks in order and answers each in the shared `answers` array: 1 valid,
// 2 invalid. Before a check it claims it with a compare-and-swap, so the calling thread can take
// the last ones itself from the back and never waits for more than the one check in hand here.
// A key OpenSSL refuses, or a check it cannot make, it leaves unanswered: the calling thread then
// makes it. node: built-ins only, so it starts in a few tens of milliseconds.
import { verify } from 'node:crypto';
import { workerData } from 'node:worker_threads';
import { ed25519PublicKey } from './public-key.mjs';

const { control, slots, slotSize, lengths, claims, answers, keys, mark } = workerData;
const counters = new Int32Array(control);
const bytes = new Uint8Array(slots);
const sizes = new Int32Array(lengths);
const claimed = new Int32Array(claims);
const answered = new Int32Array(answers);
/**
 * Positions in `counters`: checks handed over, whether more can come, checks answered here, and
 * a signal the calling thread bumps after either of the first two changes.
 */
const SUBMITTED = 0;
const CLOSED = 1;
const ANSWERED = 2;
const SIGNAL = 3;
const FREE = 0;
const SIGNATURE_BYTES = 64;

const keyObjects = keys.map((publicKey) => {
  try {
    return ed25519PublicKey(publicKey);
  } catch {
    return undefined;
  }
});

let next = 0;
for (;;) {
  // read before the rest, so a change made after it ends the wait below at once
  const signal = Atomics.load(counters, SIGNAL);
  const submitted = Atomics.load(counters, SUBMITTED);
  if (next < submitted) {
    const ticket = next++;
    if (Atomics.compareExchange(claimed, ticket, FREE, mark) !== FREE) continue;
    const key = keyObjects[sizes[ticket * 2 + 1]];
    const length = sizes[ticket * 2];
    if (key) {
      const at = ticket * slotSize;
      try {
        const valid = verify(
          null,
          bytes.subarray(at, at + length),
          key,
          bytes.subarray(at + length, at + length + SIGNATURE_BYTES),
        );
        Atomics.store(answered, ticket, valid ? 1 : 2);
      } catch {
        // left unanswered: the calling thread checks it
      }
    }
    Atomics.add(counters, ANSWERED, 1);
    Atomics.notify(counters, ANSWERED);
    continue;
  }
  if (Atomics.load(counters, CLOSED) === 1) break;
  Atomics.wait(counters, SIGNAL, signal);
}
