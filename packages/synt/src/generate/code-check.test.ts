import { describe, expect, it } from 'vitest';
import { CSV_SUM_CODE, CSV_SUM_SPEC, OVERREACHING_CODE, skeletonAnswer } from '../test/index.ts';
import { checkCode, checkSchemaText } from './code-check.ts';
import { readSkeleton } from './skeleton.ts';

const refusal = (code: string) => {
  const checked = checkCode(code, CSV_SUM_SPEC);
  return checked.ok ? '' : checked.reason;
};

const wrap = (body: string) =>
  `import { defineExecutor, ok } from '@metnos/executor-sdk/define';\n${body}\nexport default defineExecutor({ run() { return ok({}); } });\n`;

describe('checkCode: generated code is never trusted raw', () => {
  it('accepts code that keeps the rule', () => {
    expect(checkCode(CSV_SUM_CODE, CSV_SUM_SPEC)).toEqual({ ok: true, value: CSV_SUM_CODE });
  });

  it('refuses what parses as no TypeScript', () => {
    expect(refusal(`${CSV_SUM_CODE}\nconst = ;`)).toMatch(/^main.ts does not parse: main.ts:\d+:\d+/);
  });

  it('refuses imports outside node: built-ins and the define module, and built-ins that run other code', () => {
    expect(refusal(wrap("import { z } from 'zod';"))).toContain('import of "zod"');
    expect(refusal(wrap("import { createCatalog } from '@metnos/executor-sdk';"))).toContain(
      'import of "@metnos/executor-sdk"',
    );
    expect(refusal(wrap("import { readFile } from './helper.ts';"))).toContain('import of "./helper.ts"');
    expect(refusal(wrap("import { exec } from 'node:child_process';"))).toContain(
      'it loads or runs other code',
    );
    expect(refusal(wrap("export { x } from 'node:vm';"))).toContain('import of "node:vm"');
  });

  it('refuses dynamic import, require, eval, the Function constructor and process.env', () => {
    expect(refusal(wrap("const m = await import('node:fs');"))).toContain('dynamic import() is refused');
    expect(refusal(wrap("const fs = require('fs');"))).toContain('require(…) is refused');
    expect(refusal(wrap("eval('1');"))).toContain('eval(…) is refused');
    expect(refusal(wrap("new Function('return 1')();"))).toContain('new Function(…) is refused');
    expect(refusal(wrap('const token = process.env.TOKEN;'))).toContain('process.env is refused');
  });

  it('refuses undeclared error classes and a missing default definition', () => {
    expect(refusal(CSV_SUM_CODE.replace("fail('NotANumber'", "fail('Oops'"))).toContain(
      "fail('Oops', …): not one of the declared error classes",
    );
    expect(refusal("import { ok } from '@metnos/executor-sdk/define';\nexport const x = ok();\n")).toContain(
      'export default defineExecutor',
    );
  });

  it('checks schema.json against the spec', () => {
    const good = readSkeleton(skeletonAnswer(CSV_SUM_SPEC, CSV_SUM_CODE));
    expect(good.ok).toBe(true);
    if (!good.ok) return;
    expect(checkSchemaText(good.value.schema, CSV_SUM_SPEC).ok).toBe(true);
    const schema = JSON.parse(good.value.schema);
    schema.definitions.Input.properties.extra = { type: 'string', description: 'more' };
    delete schema.definitions.Input.properties.column.description;
    const refused = checkSchemaText(JSON.stringify(schema), CSV_SUM_SPEC);
    expect(refused).toMatchObject({ ok: false });
    expect(!refused.ok && refused.reason).toContain('Input.extra is not in the spec');
    expect(!refused.ok && refused.reason).toContain('Input.column has no description');
    expect(checkSchemaText('[[[', CSV_SUM_SPEC)).toMatchObject({ ok: false });
  });

  it('reads exactly one ts and one json block from an answer', () => {
    expect(readSkeleton('```ts\nx\n```')).toMatchObject({ ok: false });
    expect(readSkeleton(skeletonAnswer(CSV_SUM_SPEC, OVERREACHING_CODE))).toMatchObject({ ok: true });
  });
});
