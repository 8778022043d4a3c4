export {
  type ChannelApproval,
  type ChannelLogger,
  type ChannelReply,
  createTelegramChannel,
  NOTICES,
  type TelegramChannel,
  type TelegramChannelOptions,
} from './channel.ts';
export {
  createTelegramClient,
  DEFAULT_TELEGRAM_BASE_URL,
  type InlineButton,
  redactToken,
  TELEGRAM_CALLBACK_DATA_LIMIT,
  TELEGRAM_MESSAGE_LIMIT,
  TelegramApiError,
  type TelegramCallbackQuery,
  type TelegramClient,
  type TelegramClientOptions,
  type TelegramErrorKind,
  type TelegramMessage,
  type TelegramUpdate,
} from './client.ts';
export { splitMessage } from './split.ts';
