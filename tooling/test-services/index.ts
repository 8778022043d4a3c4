/**
 * Real services on loopback for Metnos tests, shared by the executors' birth
 * tests and the planner's and CLI's end-to-end tests: a Dovecot IMAP server
 * and an SMTP sink from Debian packages, with generated mail, and a Radicale
 * CalDAV server.
 */
export {
  type CalendarAccount,
  type CalendarServer,
  type CalendarServerOptions,
  calendarAccount,
  calendarServerUnavailable,
  RADICALE_PYTHON,
  startCalendarServer,
} from './calendar-server.ts';
export { ImapProbe, type ProbedMessage } from './imap-probe.ts';
export { type GeneratedKind, generatedMailbox, messageText, type TestMessage } from './mail-messages.ts';
export {
  credentialsDir,
  DOVECOT_BINARY,
  type MailAccount,
  type MailServer,
  type MailServerOptions,
  mailAccount,
  mailServerUnavailable,
  SYSTEM_PYTHON,
  startMailServer,
} from './mail-server.ts';
