import type { Catalog, ExecutorRunner, KeyStore, PublicKey, VerifiedExecutor } from '@metnos/executor-sdk';
import type { DesiredSignature } from '@metnos/mnestome';
import type { BirthCase, Specification } from './spec-schema.ts';

/** The seven stages, in the order the dispatcher walks them. */
export const STAGE_NAMES = [
  'pattern',
  'specification',
  'skeleton',
  'profile',
  'birth',
  'approval',
  'install',
] as const;
export type StageName = (typeof STAGE_NAMES)[number];

/** What a suspended run waits for: the person's word on the spec, on the whole, or a fix. */
export type WaitingFor = 'spec' | 'approval' | 'fix';

/**
 * Why a generation exists. `proto`: a recurring proto-mnest (a tool wished for
 * that does not exist); `merge`, `generalise`, `specialise`: an introspective
 * proposal about executors that do exist.
 */
export type Motivation =
  | {
      kind: 'proto';
      src: string;
      dst: string;
      uses: number;
      weight: number;
      lastUsedAt: string;
      desired: DesiredSignature;
    }
  | { kind: 'merge'; executors: [string, string]; shared: string[]; overlap: number }
  | { kind: 'generalise'; executors: string[]; shape: string; stem: string }
  | {
      kind: 'specialise';
      executor: string;
      argument: string;
      value: string;
      calls: number;
      share: number;
      grantsBefore: Grants;
      grantsAfter: Grants;
    };

/** The grants of a sandbox profile the synt may give: paths to read and write, domains to reach. Never exec. */
export interface Grants {
  read: string[];
  write: string[];
  domains: string[];
}

/** The artefacts a run drafts, as text; the review digest is taken over exactly these. */
export interface Artefacts {
  /** manifest.toml without `[sandbox].hash` (signing writes it). */
  manifest: string;
  code: string;
  schema: string;
  /** The birth cases (the spec's and the synt's own), written to tests/cases.json. */
  cases: BirthCase[];
  grants: Grants;
}

/** What the person saw and approved: the digest of the artefacts, who, when. */
export interface Approval {
  digest: string;
  by: string;
  at: string;
}

/** The state the stages share, persisted after every stage. */
export interface RunDraft {
  motivation: Motivation;
  spec?: Specification;
  /** The model's main.ts and schema.json, once checked. */
  code?: string;
  schema?: string;
  /** The tightest grants the birth tests passed under (stage 4). */
  grants?: Grants;
  /** The cases stage 5 ran and passed, the spec's and the synt's own. */
  cases?: BirthCase[];
  /** The review shown for approval (stage 6). */
  review?: { digest: string; artefacts: Artefacts };
  approval?: Approval;
  installed?: { name: string; version: string; keyId: string; dir: string; state: string };
}

/** The person's word on a suspended run. */
export interface Decision {
  /** Who decided (the CLI's user, the console's bearer). */
  by: string;
  /** An amended specification: replaces the draft's and (from a fix) runs the later stages again. */
  spec?: Specification;
  /** The review digest the person saw (stage 6); another digest decides nothing. */
  digest?: string;
}

/** A stage finished: what it changed in the draft, and a line for the record. */
export interface StageDone {
  kind: 'done';
  note: string;
  update?: Partial<RunDraft>;
  detail?: unknown;
}

/** A stage stopped and asks the person: the question or the reason, and what it found so far. */
export interface StageSuspended {
  kind: 'suspend';
  waitingFor: WaitingFor;
  reason: string;
  update?: Partial<RunDraft>;
  detail?: unknown;
}

export type StageOutcome = StageDone | StageSuspended;

/** A model as the synt calls it: the planner's `ChatModel` satisfies it. */
export interface SyntModel {
  readonly id: string;
  readonly provider: string;
  generate(request: {
    system: string;
    messages: Array<{ role: 'user' | 'assistant'; content: string }>;
    tools: [];
    temperature?: number;
    maxTokens?: number;
  }): Promise<{ text: string; usage?: { inputTokens: number; outputTokens: number } }>;
}

/** Asks the wise tier once, recorded in the run's lineage; throws what the model threw. */
export type AskModel = (system: string, user: string) => Promise<string>;

/** What every stage may use. Settings the apps compose once; `decision` only for the stage that waited. */
export interface StageContext {
  runId: string;
  decision?: Decision;
  ask: AskModel;
  /** The executors in the catalog now (signed, loaded). */
  executors(): readonly VerifiedExecutor[];
  settings: GeneratorSettings;
}

/** One stage of the pipeline. */
export interface Stage {
  name: StageName;
  run(draft: RunDraft, context: StageContext): Promise<StageOutcome>;
}

/** What the pattern detector counts as recurring. */
export interface PatternRules {
  /** Default 3. */
  minUses?: number;
  /** Default 0.30. */
  minWeight?: number;
  /** The window the uses must fall in, in days. Default 30 (a month). */
  windowDays?: number;
}

/** Reads the mnestome's proto-mnests (the `@metnos/mnestome` API). */
export interface ProtoSource {
  protoMnests(filter: { since?: Date; minUses?: number; minWeight?: number }): Array<{
    src: string;
    dst: string;
    uses: number;
    weight: number;
    lastUsedAt: string;
    desiredSignature?: DesiredSignature;
  }>;
}

/** Settings of the generator, shared by every stage. */
export interface GeneratorSettings {
  /** The wise tier (the planner's `createTiers(...).wise`). */
  model: SyntModel;
  /** The catalog the new executor lands in; its root is the executors folder. */
  catalog: Pick<Catalog, 'root' | 'executors' | 'load' | 'get' | 'list' | 'lifecycle'>;
  /** The sandbox runner birth tests go through (`createSandboxRunner()` from `@metnos/sandbox`). */
  runner: ExecutorRunner;
  /** The person's key store (`createKeyStore({ configDir })`). */
  keyStore: Pick<KeyStore, 'load'>;
  /** The name of the person's key in it. Default `default`. */
  keyName?: string;
  /** The keys the workspace trusts: the installed executor must verify against them. */
  trustedKeys: readonly PublicKey[];
  /** Key ids that must never sign a synthesised executor (the release keys). */
  refusedKeyIds?: readonly string[];
  mnestome?: ProtoSource;
  pattern?: PatternRules;
  /** How many times the skeleton stage may ask again after a refused draft. Default 2 attempts. */
  skeletonAttempts?: number;
  clock?: () => Date;
}
