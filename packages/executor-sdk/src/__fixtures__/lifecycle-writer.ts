// Saves a growing lifecycle file over and over, printing the index of each
// completed save, until it is killed. Used by the kill -9 test.
import { openLifecycleStore } from '../lifecycle.ts';

const path = process.argv[2];
if (!path) throw new Error('usage: lifecycle-writer.ts <lifecycle.json>');
const store = await openLifecycleStore(path);
for (let index = 0; ; index++) {
  store.introduce(`x${index}@1.0.0`, 'active', 'x'.repeat(2000));
  await store.save();
  process.stdout.write(`${index}\n`);
}
