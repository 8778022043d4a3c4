// One catalog load in a process of its own, as a server or the CLI pays it at
// start: nothing compiled yet, the state (and signature cache) as the previous
// process left it. Prints the load time in milliseconds as JSON.
// Usage: node [--conditions=metnos-source] catalog-process.ts <root> <stateDir> <public key file> <cache|nocache> <secret file> <expected count> [<entry module>]
const [root, stateDir, keyFile, mode, secretFile, expected, entry] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
  string | undefined,
];
// the built package (dist/index.js) or the source; imported before the clock starts
const { createCatalog, openVerificationCache, readPublicKey } = (await import(
  entry ?? '../src/index.ts'
)) as typeof import('../src/index.ts');
const trustedKeys = [await readPublicKey(keyFile)];
const start = performance.now();
const verificationCache =
  mode === 'cache'
    ? await openVerificationCache({ file: `${stateDir}/verification-cache.json`, secretFile })
    : undefined;
const catalog = createCatalog({ root, trustedKeys, stateDir, verificationCache });
const report = await catalog.load();
const ms = performance.now() - start;
if (report.loaded.length !== Number(expected)) {
  throw new Error(`loaded ${report.loaded.length} of ${expected}: ${JSON.stringify(report.quarantined[0])}`);
}
console.log(JSON.stringify({ ms, loaded: report.loaded.length, cached: verificationCache?.hits ?? 0 }));
