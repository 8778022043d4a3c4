/** The closed vocabulary of verbs, each with the words (English and Italian) that name it. */
export const INTENT_VERBS: Readonly<Record<string, readonly string[]>> = {
  read: ['read', 'show', 'open', 'cat', 'view', 'display', 'leggi', 'mostra', 'apri', 'visualizza'],
  write: ['write', 'save', 'create', 'append', 'store', 'scrivi', 'salva', 'crea', 'aggiungi'],
  list: ['list', 'ls', 'elenca', 'lista'],
  search: ['search', 'find', 'grep', 'look', 'locate', 'cerca', 'trova'],
  move: ['move', 'rename', 'mv', 'sposta', 'rinomina'],
  fetch: ['fetch', 'download', 'get', 'scarica', 'prendi'],
  send: ['send', 'notify', 'message', 'text', 'invia', 'manda', 'notifica'],
  run: ['run', 'execute', 'exec', 'esegui', 'lancia'],
  count: ['count', 'stats', 'statistics', 'conta', 'statistiche'],
  query: ['extract', 'pick', 'query', 'select', 'estrai', 'seleziona'],
  tell: ['tell', 'what', 'dimmi', 'quale', 'quanto'],
};

/** The closed vocabulary of objects. */
export const INTENT_OBJECTS: Readonly<Record<string, readonly string[]>> = {
  file: [
    'file',
    'files',
    'document',
    'note',
    'notes',
    'diary',
    'md',
    'txt',
    'log',
    'documento',
    'nota',
    'note',
    'diario',
  ],
  folder: ['folder', 'directory', 'dir', 'folders', 'cartella', 'cartelle'],
  page: ['page', 'web', 'site', 'url', 'website', 'http', 'https', 'pagina', 'sito'],
  message: ['message', 'telegram', 'chat', 'messaggio'],
  command: ['command', 'shell', 'program', 'script', 'comando'],
  time: ['time', 'date', 'clock', 'day', 'ora', 'data', 'giorno'],
  json: ['json', 'field', 'fields', 'campo', 'campi'],
  text: ['text', 'words', 'lines', 'line', 'testo', 'parole', 'righe', 'riga'],
};
