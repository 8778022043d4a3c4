import { ProviderConfigError } from './errors.ts';

/**
 * True for `localhost`, `127.0.0.0/8` and `[::1]`: the hosts plain HTTP may reach.
 *
 * @example
 * isLoopbackHost(new URL('http://127.0.0.2:11434').hostname); // true
 */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(hostname);
  return octets?.slice(1).every((octet) => Number(octet) <= 255) === true;
}

/**
 * Checks a provider base URL and returns it without a trailing slash. Plain
 * `http://` is allowed only on loopback, so a typo cannot ship an API key in
 * the clear; credentials inside the URL are refused too (they belong in
 * `api_key_env`).
 *
 * @example
 * safeBaseUrl('http://localhost:11434', 'ollama'); // 'http://localhost:11434'
 * safeBaseUrl('http://10.0.0.5:11434', 'ollama');  // throws ProviderConfigError
 */
export function safeBaseUrl(raw: string, provider: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new ProviderConfigError({
      field: 'base_url',
      message: `${provider}: base URL "${raw}" is not a URL`,
      cause,
    });
  }
  if (url.username !== '' || url.password !== '') {
    throw new ProviderConfigError({
      field: 'base_url',
      message: `${provider}: base URL must not carry credentials; put the key in an environment variable named by api_key_env`,
    });
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
  if (!secure) {
    throw new ProviderConfigError({
      field: 'base_url',
      message: `${provider}: base URL ${url.origin} must use https:// (plain http:// is allowed only on localhost, 127.0.0.0/8 and [::1])`,
    });
  }
  return url.href.replace(/\/+$/, '');
}
