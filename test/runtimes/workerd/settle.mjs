/* fn's error as { code, message }, or code null when it succeeds. */
export async function settle(fn) {
  try {
    await fn();
    return { code: null, message: 'no error' };
  } catch (err) {
    return { code: err && err.code, message: String(err && err.message) };
  }
}
