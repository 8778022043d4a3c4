// The tests stand for `pnpm metnos …`: they set INIT_CWD to the folder the person is in. Started
// under `npx -c '…'`, the environment says npx, and the CLI would rightly ignore INIT_CWD.
if (process.env.npm_lifecycle_event === 'npx') process.env.npm_lifecycle_event = 'test';
