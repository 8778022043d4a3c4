import { ProviderConfigError } from './errors.ts';

/** An environment to read from; `process.env` unless one is injected. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The one place the provider layer reads the environment. An explicit key
 * wins; otherwise the named variable is read from the injected environment
 * (or `process.env`). An empty result throws a fix-it `ProviderConfigError`
 * naming the variable, so a missing key fails at construction, not as a 401.
 *
 * @example
 * const apiKey = loadApiKey({ apiKey: settings.apiKey, envName: 'ANTHROPIC_API_KEY', provider: 'anthropic' });
 */
export function loadApiKey(settings: {
  apiKey?: string;
  envName?: string;
  env?: Environment;
  provider: string;
}): string {
  if (settings.apiKey !== undefined && settings.apiKey.trim() !== '') return settings.apiKey;
  const env = settings.env ?? process.env;
  const fromEnv = settings.envName === undefined ? undefined : env[settings.envName];
  if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv;
  const where =
    settings.envName === undefined
      ? 'set `api_key_env` to the name of the variable that holds it'
      : `set the environment variable ${settings.envName}`;
  throw new ProviderConfigError({
    field: 'api_key_env',
    message: `${settings.provider} needs a non-empty API key: ${where}`,
  });
}
