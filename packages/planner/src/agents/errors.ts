import { MetnosError } from '@metnos/executor-sdk';

const configMarker = Symbol.for('metnos.error.AgentConfigError');

/**
 * A runtime that cannot be built or a plan that cannot run: an unknown
 * executor, a custom tool with a bad or colliding name, an edge to an agent
 * that does not exist. Thrown at construction (or at `run` for the plan),
 * before any model is asked anything. `field` names the setting at fault.
 *
 * @example
 * try { createAgentRuntime({ agents }); }
 * catch (error) { if (AgentConfigError.isInstance(error)) console.error(error.field, error.message); }
 */
export class AgentConfigError extends MetnosError {
  private readonly [configMarker] = true;
  readonly field: string;

  constructor(settings: { field: string; message: string; cause?: unknown }) {
    super({ code: 'agent_config', message: settings.message, cause: settings.cause });
    this.name = 'AgentConfigError';
    this.field = settings.field;
  }

  static override isInstance(error: unknown): error is AgentConfigError {
    return (
      MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[configMarker] === true
    );
  }
}

const argMarker = Symbol.for('metnos.error.ToolArgError');

/**
 * Thrown by a custom tool for arguments it cannot use. The model is told only
 * "tool unavailable"; the message stays in the trace event for operators,
 * so it is also the way to keep a detail (or a secret) away from the model.
 *
 * @example
 * if (typeof args.channel !== 'string') throw new ToolArgError('channel must be a string');
 */
export class ToolArgError extends MetnosError {
  private readonly [argMarker] = true;

  constructor(message: string) {
    super({ code: 'tool_arg', message });
    this.name = 'ToolArgError';
  }

  static override isInstance(error: unknown): error is ToolArgError {
    return MetnosError.isInstance(error) && (error as unknown as Record<symbol, unknown>)[argMarker] === true;
  }
}
