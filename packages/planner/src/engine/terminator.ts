import { createHash } from 'node:crypto';
import { openDatabase } from '@metnos/autopath/stores';
import type Database from 'better-sqlite3';
import { and, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { plannerStoreMigrations } from '../stores/migrations.ts';
import { gaps } from '../stores/schema.ts';

/** Why a turn could not be done. */
export type TerminationCause =
  | 'out_of_scope'
  | 'no_capability'
  | 'missing_input'
  | 'recovery_failed'
  | 'blocked'
  | 'model_unreachable'
  | 'plan_unreadable'
  | 'empty_catalog'
  | 'budget_exhausted'
  | 'verification_blocked'
  | 'aborted';

/** Languages the message dictionary speaks. */
export type Language = 'en' | 'it';

type Entry = { cause: string; action: string };

/**
 * The Terminator's message dictionary: a cause and a concrete action per
 * termination cause, in English and Italian. `{detail}` and `{tool}` are filled in.
 */
export const TERMINATOR_MESSAGES: Readonly<Record<Language, Readonly<Record<TerminationCause, Entry>>>> = {
  en: {
    out_of_scope: {
      cause: 'I cannot do this: it needs something I have no executor for ({detail}).',
      action:
        'Add or authorise an executor that can do it (`metnos executor list` shows what I have), or rephrase the request around what is available.',
    },
    no_capability: {
      cause: 'None of my executors can do this ({detail}).',
      action: 'Create one with `metnos executor new <name>`, sign it, and ask again.',
    },
    missing_input: {
      cause: 'Something the request needs is missing: {detail}.',
      action: 'Check that the file, folder or value exists and tell me where it is.',
    },
    recovery_failed: {
      cause: 'The plan failed at {tool} and the alternative failed too: {detail}.',
      action:
        'Give me more detail (the exact path, URL or value), or check the executor with `metnos executor test {tool}`.',
    },
    blocked: {
      cause: 'I stopped because the vaglio blocked a step: {detail}.',
      action:
        'If the action is safe, rephrase it naming the file or executor explicitly; forbidden paths stay forbidden.',
    },
    model_unreachable: {
      cause: 'I could not reach the language model: {detail}.',
      action: 'Start it (for Ollama: `ollama serve`) or fix [runtime.llm] in metnos.toml, then ask again.',
    },
    plan_unreadable: {
      cause: 'The model did not produce a usable plan: {detail}.',
      action: 'Ask again in simpler words, or configure a stronger model for the wise tier.',
    },
    empty_catalog: {
      cause: 'I have no executors to work with.',
      action: 'Install or re-sign executors, then check them with `metnos executor list`.',
    },
    budget_exhausted: {
      cause: 'I stopped because {detail}.',
      action: 'Ask for less in one request, or raise the limit in [runtime.budget] of metnos.toml.',
    },
    verification_blocked: {
      cause: 'I did not send the answer: the verifier blocked it ({detail}).',
      action: 'Check the files or messages it rests on, then ask again; the verdict is in the turn log.',
    },
    aborted: {
      cause: 'The plan stopped at {tool} as it was told to on this error: {detail}.',
      action: 'Fix what {tool} needs (the path, value or service), then ask again.',
    },
  },
  it: {
    out_of_scope: {
      cause: 'Non posso farlo: serve qualcosa per cui non ho un executor ({detail}).',
      action:
        'Aggiungi o autorizza un executor che lo sappia fare (`metnos executor list` mostra quelli disponibili), oppure riformula la richiesta.',
    },
    no_capability: {
      cause: 'Nessuno dei miei executor sa farlo ({detail}).',
      action: 'Creane uno con `metnos executor new <nome>`, firmalo e chiedi di nuovo.',
    },
    missing_input: {
      cause: 'Manca qualcosa che la richiesta richiede: {detail}.',
      action: 'Controlla che il file, la cartella o il valore esista e dimmi dove si trova.',
    },
    recovery_failed: {
      cause: 'Il piano è fallito su {tool} e anche l’alternativa è fallita: {detail}.',
      action:
        'Dammi più dettagli (il percorso, l’URL o il valore esatto), oppure verifica l’executor con `metnos executor test {tool}`.',
    },
    blocked: {
      cause: 'Mi sono fermato perché il vaglio ha bloccato un passo: {detail}.',
      action:
        'Se l’azione è sicura, riformulala nominando esplicitamente il file o l’executor; i percorsi vietati restano vietati.',
    },
    model_unreachable: {
      cause: 'Non riesco a raggiungere il modello linguistico: {detail}.',
      action:
        'Avvialo (per Ollama: `ollama serve`) o correggi [runtime.llm] in metnos.toml, poi chiedi di nuovo.',
    },
    plan_unreadable: {
      cause: 'Il modello non ha prodotto un piano utilizzabile: {detail}.',
      action:
        'Chiedi di nuovo con parole più semplici, o configura un modello più capace per il livello wise.',
    },
    empty_catalog: {
      cause: 'Non ho executor con cui lavorare.',
      action: 'Installa o rifirma gli executor, poi controllali con `metnos executor list`.',
    },
    budget_exhausted: {
      cause: 'Mi sono fermato perché {detail}.',
      action: 'Chiedi meno in una sola richiesta, oppure alza il limite in [runtime.budget] di metnos.toml.',
    },
    verification_blocked: {
      cause: 'Non ho inviato la risposta: il verificatore l’ha bloccata ({detail}).',
      action:
        'Controlla i file o i messaggi su cui si basa e chiedi di nuovo; il verdetto è nel registro del turno.',
    },
    aborted: {
      cause: 'Il piano si è fermato a {tool}, come previsto per questo errore: {detail}.',
      action: 'Sistema ciò che serve a {tool} (percorso, valore o servizio) e chiedi di nuovo.',
    },
  },
};

/** Renders the cause and action for a termination in a language. */
export function terminationMessage(
  cause: TerminationCause,
  language: Language,
  detail = '',
  tool = '',
): { cause: string; action: string; text: string } {
  const entry = (TERMINATOR_MESSAGES[language] ?? TERMINATOR_MESSAGES.en)[cause];
  const fill = (template: string) => template.replaceAll('{detail}', detail).replaceAll('{tool}', tool);
  const rendered = { cause: fill(entry.cause), action: fill(entry.action) };
  return { ...rendered, text: `${rendered.cause} ${rendered.action}` };
}

/** Guesses the language of a request (Italian or English) from common words. */
export function detectLanguage(request: string): Language {
  const words = request
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .split(/[^a-z]+/);
  const italian = new Set([
    'il',
    'lo',
    'la',
    'gli',
    'le',
    'di',
    'che',
    'per',
    'con',
    'una',
    'leggi',
    'dimmi',
    'mostra',
    'cerca',
    'sposta',
    'scrivi',
    'quanti',
    'quante',
    'quale',
    'sono',
    'della',
    'del',
    'nel',
    'nella',
    'ultime',
    'righe',
    'cosa',
    'fammi',
    'manda',
    'invia',
    'oggi',
    'ora',
  ]);
  const hits = words.filter((word) => italian.has(word)).length;
  return hits >= 1 && hits / Math.max(1, words.length) >= 0.1 ? 'it' : 'en';
}

/**
 * One row of the gap log (`log.list()`): a cause and a request signature,
 * how often they recurred, and when. Written out rather than inferred from
 * the table schema, so the package's public types need no ORM types;
 * `stores/schema-rows.test-d.ts` fails the typecheck when the two part.
 *
 * @example
 * const [top] = log.list(); // most frequent first
 * if (top) console.log(`${top.cause} ×${top.count}: ${top.example}`);
 */
export interface GapRecord {
  id: number;
  /** A `TerminationCause`, as stored. */
  cause: string;
  /** The first 24 hex digits of the SHA-256 of the normalised request or intent. */
  signature: string;
  /** The first request seen with this signature, cut to 500 characters. */
  example: string;
  /** The latest detail, cut to 500 characters. */
  detail: string;
  count: number;
  /** ISO 8601. */
  firstSeen: string;
  /** ISO 8601. */
  lastSeen: string;
}

/**
 * The gap log: every termination, grouped by cause and by what was asked
 * (the intent, or the normalised request), with a recurrence counter — the
 * raw material for deciding which executor to build next.
 *
 * @example
 * const log = createGapLog({ path: 'workspace/.runtime/terminator.sqlite' });
 * log.record({ cause: 'no_capability', signature: 'send mail', example: 'send a mail to Ada', detail: 'no mail executor' });
 */
export function createGapLog(
  settings: { db: Database.Database; clock?: () => Date } | { path: string; clock?: () => Date },
) {
  const { client, owned } = openDatabase(settings, plannerStoreMigrations());
  const db = drizzle(client);
  const clock = settings.clock ?? (() => new Date());
  return {
    record(entry: { cause: TerminationCause; signature: string; example: string; detail: string }): number {
      const now = clock().toISOString();
      const signature = createHash('sha256')
        .update(entry.signature.toLowerCase().trim())
        .digest('hex')
        .slice(0, 24);
      db.insert(gaps)
        .values({
          cause: entry.cause,
          signature,
          example: entry.example.slice(0, 500),
          detail: entry.detail.slice(0, 500),
          count: 1,
          firstSeen: now,
          lastSeen: now,
        })
        .onConflictDoUpdate({
          target: [gaps.cause, gaps.signature],
          set: { count: sql`${gaps.count} + 1`, lastSeen: now, detail: entry.detail.slice(0, 500) },
        })
        .run();
      return (
        db
          .select({ count: gaps.count })
          .from(gaps)
          .where(and(eq(gaps.cause, entry.cause), eq(gaps.signature, signature)))
          .get()?.count ?? 1
      );
    },
    list(): GapRecord[] {
      return db.select().from(gaps).orderBy(sql`${gaps.count} desc`).all();
    },
    close(): void {
      if (owned) client.close();
    },
  };
}

export type GapLog = ReturnType<typeof createGapLog>;
