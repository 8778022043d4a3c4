export { type AppSettings, createApp, publicTurn, type ServerEngine } from './app.ts';
export { type ServeSettings, startServer } from './serve.ts';
export * from './telegram/index.ts';
export { bearerMatches, ServerTokenError, serverToken, TOKEN_FILE } from './token.ts';
