import { VaglioSettingsError } from './errors.ts';

/** Environment variable that sets the judge's threshold when no explicit option does. */
export const THRESHOLD_ENV = 'METNOS_JUDGE_THRESHOLD';

/** The threshold used when neither the option nor the environment sets one. */
export const DEFAULT_THRESHOLD = 0.3;

/**
 * The one place the vaglio reads the environment. An explicit value wins,
 * then the environment variable, then the fallback; a value outside
 * [min, max] throws a {@link VaglioSettingsError} that says how to fix it.
 *
 * @example
 * const threshold = loadNumberSetting({ value: settings.threshold, option: 'threshold', env: 'METNOS_JUDGE_THRESHOLD', fallback: 0.3, min: 0, max: 1 });
 */
export function loadNumberSetting(settings: {
  value: number | undefined;
  /** The option's name, for the error message. */
  option: string;
  env: string;
  fallback: number;
  min: number;
  max: number;
}): number {
  const { value, option, env, fallback, min, max } = settings;
  if (value !== undefined) {
    if (!Number.isFinite(value) || value < min || value > max) {
      throw new VaglioSettingsError({
        setting: option,
        message: `the ${option} option must be a number from ${min} to ${max}; got ${value}`,
      });
    }
    return value;
  }
  const raw = process.env[env];
  if (raw === undefined || raw.trim() === '') return fallback;
  const parsed = Number(raw.trim());
  if (!Number.isFinite(parsed) || parsed < min || parsed > max) {
    throw new VaglioSettingsError({
      setting: env,
      message: `${env} must be a number from ${min} to ${max} (e.g. ${env}=${fallback}); got "${raw}". Fix or unset it, or pass the ${option} option.`,
    });
  }
  return parsed;
}
