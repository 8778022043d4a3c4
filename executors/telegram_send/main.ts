import { defineExecutor, type ExecutorContext, ExecutorFailure, fail, ok } from '@metnos/executor-sdk/define';
import {
  createTelegramClient,
  DEFAULT_TELEGRAM_BASE_URL,
  proxyFromEnvironment,
  TelegramApiError,
  type TelegramClient,
  type TelegramMessage,
} from '@metnos/executor-sdk/telegram';

interface Args {
  text: string;
  parse_mode?: 'none' | 'MarkdownV2' | 'HTML';
  silent?: boolean;
  link_preview?: boolean;
}

interface Output {
  message_id: number;
  sent_at: string;
  characters: number;
}

const DEADLINE_MARGIN_MS = 500;
const MAX_RESPONSE_BYTES = 256 * 1024;

/**
 * The client for the trusted chat, from the host configuration only: the bot
 * token, the chat and the API base can never come from the arguments, and the
 * API host must be on this executor's network allow-list.
 */
function readSettings(ctx: ExecutorContext): { client: TelegramClient; chatId: string | number } {
  const token = ctx.config.bot_token;
  const chatId = ctx.config.chat_id;
  if (typeof token !== 'string' || token === '') {
    throw new ExecutorFailure(
      'NotConfigured',
      'no Telegram bot token is configured for this instance (config bot_token)',
    );
  }
  if (
    !(
      (typeof chatId === 'string' && /^(-?\d+|@\w{4,})$/.test(chatId)) ||
      (typeof chatId === 'number' && Number.isInteger(chatId))
    )
  ) {
    throw new ExecutorFailure(
      'NotConfigured',
      'no trusted Telegram chat is configured for this instance (config chat_id)',
    );
  }
  const baseUrl = typeof ctx.config.base_url === 'string' ? ctx.config.base_url : DEFAULT_TELEGRAM_BASE_URL;
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    throw new ExecutorFailure('NotConfigured', 'config base_url is not a URL');
  }
  const network = ctx.profile.network;
  if (!(network.mode === 'allowlist' && network.domains.some((domain) => domain === host))) {
    throw new ExecutorFailure('Forbidden', `${host} is not on this executor's network allow-list`);
  }
  const overrides = ctx.config.host_overrides;
  try {
    const client = createTelegramClient({
      token,
      baseUrl,
      proxy: proxyFromEnvironment(baseUrl),
      hostOverrides:
        overrides !== null && typeof overrides === 'object' ? (overrides as Record<string, string>) : {},
      requestTimeoutMs: Math.max(0, ctx.remainingMs() - DEADLINE_MARGIN_MS),
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
    return { client, chatId };
  } catch (error) {
    // The client's refusals (a malformed token, base URL or proxy) never quote the token.
    throw new ExecutorFailure('NotConfigured', `config: ${(error as Error).message}`);
  }
}

/** The error class for a failed send, or a `RateLimited` outcome Telegram asked for. */
function sendFailure(error: TelegramApiError) {
  const said = error.description ? `: ${error.description}` : '';
  if (error.status === 429) {
    const wait = error.retryAfter === undefined ? '' : ` ${error.retryAfter} s`;
    return fail('RateLimited', `Telegram asks to wait${wait} before sending again${said}`, {
      ...(error.retryAfter === undefined ? {} : { retry_after: error.retryAfter }),
    });
  }
  if (error.kind === 'timeout') {
    throw new ExecutorFailure(
      'Network',
      'Telegram did not answer in time; the message may or may not have been delivered',
    );
  }
  if (error.kind === 'network' || error.kind === 'proxy' || error.kind === 'aborted') {
    throw new ExecutorFailure('Network', error.message);
  }
  if (error.status === 401 || error.status === 404) {
    throw new ExecutorFailure('Unauthorized', `Telegram refused the bot token${said}`);
  }
  if (error.status !== undefined && error.status >= 500) {
    throw new ExecutorFailure('Network', `Telegram answered HTTP ${error.status}${said}`);
  }
  if (error.kind === 'malformed') throw new ExecutorFailure('Rejected', error.message);
  throw new ExecutorFailure('Rejected', `Telegram did not accept the message (HTTP ${error.status})${said}`);
}

export default defineExecutor<Args, Output>({
  async run(args, ctx) {
    const { client, chatId } = readSettings(ctx);
    let sent: TelegramMessage;
    try {
      sent = await client.sendMessage({
        chatId,
        text: args.text,
        ...(args.parse_mode && args.parse_mode !== 'none' ? { parseMode: args.parse_mode } : {}),
        silent: args.silent ?? false,
        linkPreview: args.link_preview !== false,
      });
    } catch (error) {
      if (TelegramApiError.isInstance(error)) return sendFailure(error);
      throw error;
    }
    return ok({
      message_id: sent.message_id,
      sent_at: new Date((sent.date ?? Math.floor(Date.now() / 1000)) * 1000).toISOString(),
      characters: [...args.text].length,
    });
  },
});
