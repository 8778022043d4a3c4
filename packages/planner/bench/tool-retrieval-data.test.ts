import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadToolRetrievalData, parseCsv } from './tool-retrieval-data.ts';

const fixtures = join(import.meta.dirname, '__fixtures__');
const scratch: string[] = [];
afterEach(() => {
  for (const folder of scratch.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A copy of a fixture folder with one file replaced, to show what a broken file gives. */
function brokenCopy(fixture: string, file: string, text: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'metnos-bench-data-'));
  scratch.push(folder);
  cpSync(join(fixtures, fixture), folder, { recursive: true });
  writeFileSync(join(folder, file), text);
  return folder;
}

describe('parseCsv', () => {
  it('keeps commas, newlines and doubled quotes inside quoted fields', () => {
    expect(parseCsv('Query,Tool\n"a, b",x\n"say ""hi""\nthen go",y\r\nplain,z')).toEqual([
      ['Query', 'Tool'],
      ['a, b', 'x'],
      ['say "hi"\nthen go', 'y'],
      ['plain', 'z'],
    ]);
  });
});

describe('loadToolRetrievalData', () => {
  it('reads a tools.jsonl + queries.jsonl folder', () => {
    const data = loadToolRetrievalData(join(fixtures, 'tiny-jsonl'));
    expect(data.format).toBe('jsonl');
    expect(data.tools.map((tool) => tool.name)).toEqual([
      'weather_now',
      'alarm_set',
      'notes_search',
      'news_top',
    ]);
    expect(data.tools[1]).toEqual({
      name: 'alarm_set',
      description: 'Set an alarm or a timer on this device.',
    });
    expect(data.queries).toEqual([
      { query: 'will it rain in Rome tomorrow?', tools: ['weather_now'] },
      { query: 'wake me up at seven', tools: ['alarm_set'] },
      {
        query: 'find my notes about the garden and any news on gardening',
        tools: ['notes_search', 'news_top'],
      },
    ]);
  });

  it("reads MetaTool's own files: descriptions, the single-tool CSV and the multi-tool list", () => {
    const data = loadToolRetrievalData(join(fixtures, 'tiny-metatool'));
    expect(data.format).toBe('metatool');
    expect(data.tools.map((tool) => tool.name)).toEqual([
      'WeatherTool',
      'alarm_clock',
      'NotesFinder',
      'news',
    ]);
    expect(data.queries).toEqual([
      { query: 'Will it rain in Rome, or in Paris, tomorrow?', tools: ['WeatherTool'] },
      { query: 'wake me up at seven', tools: ['alarm_clock'] },
      { query: 'Find the note I titled "garden"\nand the one after it', tools: ['NotesFinder'] },
      { query: 'What is the weather in Oslo and the top news there?', tools: ['WeatherTool', 'news'] },
    ]);
  });

  it('names the file and the line of a query whose gold tool is not in the catalog', () => {
    const jsonl = brokenCopy(
      'tiny-jsonl',
      'queries.jsonl',
      '{"query": "play jazz", "tools": ["music_play"]}\n',
    );
    expect(() => loadToolRetrievalData(jsonl)).toThrow(
      /queries\.jsonl query 1: gold tool "music_play" is not in the catalog/,
    );
    const metatool = brokenCopy('tiny-metatool', 'all_clean_data.csv', 'Query,Tool\nplay jazz,MusicTool\n');
    expect(() => loadToolRetrievalData(metatool)).toThrow(/gold tool "MusicTool" is not in the catalog/);
  });

  it('refuses lines of the wrong shape and a folder of neither format', () => {
    const jsonl = brokenCopy(
      'tiny-jsonl',
      'tools.jsonl',
      '{"name": "a", "description": "b"}\n{"title": "c"}\n',
    );
    expect(() => loadToolRetrievalData(jsonl)).toThrow(/tools\.jsonl line 2: name: /);
    const header = brokenCopy('tiny-metatool', 'all_clean_data.csv', 'Request,Tool\nx,news\n');
    expect(() => loadToolRetrievalData(header)).toThrow(/expected the header "Query,Tool"/);
    expect(() => loadToolRetrievalData(fixtures)).toThrow(/neither tools\.jsonl/);
  });
});
