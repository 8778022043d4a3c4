/**
 * The error an action throws, narrowed by a Metnos `isInstance` guard, so a
 * test can read its typed fields. Any other outcome fails the test.
 *
 * @example
 * expect(thrownBy(() => createTiers({}), ProviderConfigError.isInstance).field).toBe('runtime.llm.fast');
 */
export function thrownBy<T>(action: () => unknown, isInstance: (error: unknown) => error is T): T {
  try {
    action();
  } catch (error) {
    if (isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the action to throw');
}
