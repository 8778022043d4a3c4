export { startAnthropicServer } from './anthropic-server.ts';
export { canonicalJson, digest, sha256Hex } from './canonical-json.ts';
export {
  type Cassette,
  type CassetteDifference,
  type CassetteEntry,
  CassetteError,
  type CassetteFailure,
  type CassetteModel,
  type CassetteResponse,
  cassetteSchema,
  createCassetteModel,
  createRecordingModel,
  diffCassettes,
  type HashFilter,
  hashPrompt,
  type PromptView,
  type RecordingModel,
  type RecordingOptions,
  type ReplayOptions,
} from './cassette.ts';
export {
  type EmbeddingServerOptions,
  startOllamaEmbedServer,
  startOpenAiEmbedServer,
  wireEmbedding,
} from './embedding-server.ts';
export { startOllamaServer } from './ollama-server.ts';
export { startOpenAiServer } from './openai-server.ts';
export {
  createEchoModel,
  createScriptedModel,
  type RecordedChatRequest,
  type RecordingTestModel,
  type ScriptEntry,
  ScriptExhaustedError,
  type ScriptedModel,
  type ScriptStep,
  snapshotRequest,
  type TestModelOptions,
} from './scripted-model.ts';
export type {
  RecordedRequest,
  WireDrop,
  WireError,
  WireHang,
  WireReply,
  WireServer,
  WireServerOptions,
  WireStep,
  WireToolCall,
} from './wire-server.ts';
