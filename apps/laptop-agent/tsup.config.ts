import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/protocol/index.ts', 'src/main.ts'],
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
});
