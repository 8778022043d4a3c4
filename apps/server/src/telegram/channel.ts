import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  type InlineButton,
  splitMessage,
  TELEGRAM_CALLBACK_DATA_LIMIT,
  TelegramApiError,
  type TelegramCallbackQuery,
  type TelegramClient,
  type TelegramMessage,
  type TelegramUpdate,
} from '@metnos/executor-sdk/telegram';

/** An approval a turn is waiting for, as the channel shows it. */
export interface ChannelApproval {
  approvalId: string;
  /** The SHA-256 (hex) of the call the approval is for, as Vaglio computed it. */
  callHash: string;
  /** The executor the call would run. */
  tool: string;
  /** One line saying what the call would do. */
  summary: string;
}

/** What a turn (or a resumed turn) says back. */
export interface ChannelReply {
  text: string;
  approval?: ChannelApproval;
}

/** Where the channel writes what happened; fields never hold message text or the token. */
export interface ChannelLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

/** What the channel needs. */
export interface TelegramChannelOptions {
  client: TelegramClient;
  /** The chats the channel answers; every other chat gets nothing. */
  allowedChatIds: Iterable<number>;
  /** Runs one turn for a message from an allowed chat. */
  handleTurn(input: { text: string; chatId: number; messageId: number }): Promise<ChannelReply>;
  /**
   * Approves or denies a pending call after a valid button press; what it
   * returns (the resumed turn's answer) is sent to the chat.
   */
  resolveApproval(input: {
    approvalId: string;
    callHash: string;
    approved: boolean;
    chatId: number;
  }): Promise<ChannelReply | undefined>;
  logger: ChannelLogger;
  /** Seconds each long poll waits, 30 by default. */
  pollTimeoutSeconds?: number;
  /** The wait after a failed poll, doubling up to `maxMs` (1 s and 60 s by default). */
  backoff?: { initialMs?: number; maxMs?: number };
  /** How many approval buttons are remembered at most (oldest forgotten first), 1,000 by default. */
  maxPendingApprovals?: number;
}

/** A running Telegram channel. */
export interface TelegramChannel {
  /** Polls until `signal` aborts; resolves once polling and the work it started have ended. */
  run(signal: AbortSignal): Promise<void>;
  /** Sends `text` to an allowed chat, split at Telegram's limit (what a schedule's result uses). */
  deliver(chatId: number, text: string): Promise<void>;
}

/** Notices the channel answers a refused button press with. */
export const NOTICES = {
  unknown: 'This button is no longer valid.',
  used: 'This approval was already answered.',
  otherChat: 'This button belongs to another chat.',
  forged: 'This button does not match its approval.',
  failed: 'Something went wrong while answering that approval; ask again to see where it stands.',
} as const;

interface PendingButton {
  approvalId: string;
  callHash: string;
  chatId: number;
  used: boolean;
}

const ALLOWED_UPDATES = ['message', 'callback_query'];

/**
 * A Telegram channel: long-polls the Bot API, turns each text message from an
 * allowed chat into a turn and sends the answer back; an approval the turn
 * waits for comes as approve / deny buttons whose callback data is
 * `<a|d>.<key>.<mac>` — a random key for the pending approval and an HMAC
 * (a secret of this process) over the decision, the key, the approval id,
 * the call hash and the chat, so a press with altered data, from another chat
 * or after the approval was answered is refused with a short notice.
 *
 * @example
 * const channel = createTelegramChannel({ client, allowedChatIds: [42], handleTurn, resolveApproval, logger });
 * await channel.run(stop.signal);
 */
export function createTelegramChannel(options: TelegramChannelOptions): TelegramChannel {
  const { client, logger } = options;
  const allowed = new Set(options.allowedChatIds);
  const pollTimeout = options.pollTimeoutSeconds ?? 30;
  const initialBackoff = options.backoff?.initialMs ?? 1000;
  const maxBackoff = options.backoff?.maxMs ?? 60_000;
  const maxPending = options.maxPendingApprovals ?? 1000;
  const secret = randomBytes(32);
  const pending = new Map<string, PendingButton>();
  /** Per chat, the end of its queue: a chat's updates are handled in order, chats side by side. */
  const queues = new Map<number, Promise<void>>();

  function mac(decision: string, key: string, button: Omit<PendingButton, 'used'>): string {
    return createHmac('sha256', secret)
      .update(`${decision}\0${key}\0${button.approvalId}\0${button.callHash}\0${button.chatId}`)
      .digest()
      .subarray(0, 16)
      .toString('base64url');
  }

  function buttonsFor(chatId: number, approval: ChannelApproval): InlineButton[][] {
    const key = randomBytes(9).toString('base64url');
    const button = { approvalId: approval.approvalId, callHash: approval.callHash, chatId };
    pending.set(key, { ...button, used: false });
    while (pending.size > maxPending) pending.delete(pending.keys().next().value as string);
    const data = (decision: 'a' | 'd') => `${decision}.${key}.${mac(decision, key, button)}`;
    const keyboard = [
      [
        { text: 'Approve', callback_data: data('a') },
        { text: 'Deny', callback_data: data('d') },
      ],
    ];
    for (const row of keyboard)
      for (const item of row)
        if (Buffer.byteLength(item.callback_data) > TELEGRAM_CALLBACK_DATA_LIMIT)
          throw new Error('approval button data is longer than Telegram allows');
    return keyboard;
  }

  async function send(chatId: number, reply: ChannelReply): Promise<void> {
    const text = reply.approval
      ? `${reply.text ? `${reply.text}\n\n` : ''}Approve ${reply.approval.tool}? ${reply.approval.summary}`
      : reply.text;
    const pieces = splitMessage(text || '(no answer)');
    for (const [index, piece] of pieces.entries()) {
      const last = index === pieces.length - 1;
      await client.sendMessage({
        chatId,
        text: piece,
        ...(last && reply.approval ? { keyboard: buttonsFor(chatId, reply.approval) } : {}),
      });
    }
  }

  async function onMessage(message: TelegramMessage): Promise<void> {
    const chatId = message.chat.id;
    if (typeof message.text !== 'string') {
      await client.sendMessage({ chatId, text: 'I read text messages only.' });
      return;
    }
    let reply: ChannelReply;
    try {
      reply = await options.handleTurn({ text: message.text, chatId, messageId: message.message_id });
    } catch (error) {
      logger.warn('telegram: a turn failed', {
        chatId,
        messageId: message.message_id,
        error: errorName(error),
      });
      reply = { text: 'Something went wrong with that request; nothing more was done.' };
    }
    await send(chatId, reply);
  }

  /** Why a press may not resolve its approval, or the approval it resolves. */
  function check(query: TelegramCallbackQuery, chatId: number) {
    const match = /^([ad])\.([A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{22})$/.exec(query.data ?? '');
    if (!match) return { refused: NOTICES.unknown, reason: 'unreadable' } as const;
    const [, decision, key, given] = match as unknown as [string, 'a' | 'd', string, string];
    const button = pending.get(key);
    if (!button) return { refused: NOTICES.unknown, reason: 'unknown' } as const;
    const expected = Buffer.from(mac(decision, key, button));
    const actual = Buffer.from(given);
    if (button.chatId !== chatId) return { refused: NOTICES.otherChat, reason: 'other chat' } as const;
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual))
      return { refused: NOTICES.forged, reason: 'mac mismatch' } as const;
    if (button.used) return { refused: NOTICES.used, reason: 'replayed' } as const;
    return { button, approved: decision === 'a' } as const;
  }

  async function onCallback(query: TelegramCallbackQuery, chatId: number): Promise<void> {
    const verdict = check(query, chatId);
    if ('refused' in verdict) {
      logger.warn('telegram: an approval button press was refused', { chatId, reason: verdict.reason });
      await client.answerCallbackQuery({ id: query.id, text: verdict.refused });
      return;
    }
    const { button, approved } = verdict;
    button.used = true;
    await client.answerCallbackQuery({ id: query.id, text: approved ? 'Approved.' : 'Denied.' });
    let reply: ChannelReply | undefined;
    try {
      reply = await options.resolveApproval({
        approvalId: button.approvalId,
        callHash: button.callHash,
        approved,
        chatId,
      });
    } catch (error) {
      logger.warn('telegram: resolving an approval failed', { chatId, error: errorName(error) });
      reply = { text: NOTICES.failed };
    }
    if (reply) await send(chatId, reply);
  }

  function chatOf(update: TelegramUpdate): number | undefined {
    const id = update.message?.chat?.id ?? update.callback_query?.message?.chat?.id;
    return typeof id === 'number' ? id : undefined;
  }

  function dispatch(update: TelegramUpdate): void {
    const chatId = chatOf(update);
    if (chatId === undefined) return;
    if (!allowed.has(chatId)) {
      logger.warn('telegram: an update from a chat that is not allowed was ignored', {
        chatId,
        updateId: update.update_id,
      });
      return;
    }
    const work = async () => {
      try {
        if (update.message) await onMessage(update.message);
        else if (update.callback_query) await onCallback(update.callback_query, chatId);
      } catch (error) {
        logger.warn('telegram: answering an update failed', {
          chatId,
          updateId: update.update_id,
          error: describe(error),
        });
      }
    };
    const queued = (queues.get(chatId) ?? Promise.resolve()).then(work);
    queues.set(chatId, queued);
    void queued.then(() => {
      if (queues.get(chatId) === queued) queues.delete(chatId);
    });
  }

  return {
    async run(signal) {
      let offset: number | undefined;
      let wait = initialBackoff;
      while (!signal.aborted) {
        let updates: TelegramUpdate[];
        try {
          updates = await client.getUpdates({
            offset,
            timeout: pollTimeout,
            allowedUpdates: ALLOWED_UPDATES,
            signal,
          });
          wait = initialBackoff;
        } catch (error) {
          if (signal.aborted) break;
          const retryAfter = TelegramApiError.isInstance(error) ? error.retryAfter : undefined;
          const delay = retryAfter === undefined ? wait : Math.max(wait, retryAfter * 1000);
          logger.warn('telegram: polling failed; trying again', { error: describe(error), delayMs: delay });
          await sleep(delay, signal);
          wait = Math.min(wait * 2, maxBackoff);
          continue;
        }
        for (const update of updates) {
          if (offset !== undefined && update.update_id < offset) continue;
          offset = update.update_id + 1;
          dispatch(update);
        }
      }
      await Promise.allSettled([...queues.values()]);
    },

    async deliver(chatId, text) {
      if (!allowed.has(chatId)) throw new Error(`chat ${chatId} is not allowed on this channel`);
      await send(chatId, { text });
    },
  };
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

/** A client error says what failed (its message is already free of the token); anything else by name. */
function describe(error: unknown): string {
  return TelegramApiError.isInstance(error) ? error.message : errorName(error);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
