/**
 * The one check of every redirect target a request names (the OIDC sign-in's `redirect`, the console's `/sign-in?next=`):
 * pure and import-free, so the server and the console share it. A target is kept only when it is a path of this site:
 * it starts with `/`, holds no control character, whitespace or backslash (browsers drop or rewrite those, e.g.
 * `/\t/evil.example` becomes `//evil.example`), and parsed against `origin` stays on `origin`. Anything else: `fallback`.
 * What is answered is the parsed path, query and fragment, so what the browser follows is what was checked.
 */
export function localPath(target: string | null | undefined, origin: string, fallback = '/'): string {
  if (typeof target !== 'string' || !target.startsWith('/') || /[\u0000-\u0020\u007f-\u009f\\\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff]/.test(target)) return fallback
  let base: URL
  let url: URL
  try {
    base = new URL(origin)
    url = new URL(target, base)
  } catch {
    return fallback
  }
  if (url.origin !== base.origin || url.username !== '' || url.password !== '') return fallback
  const path = url.pathname + url.search + url.hash
  return path.startsWith('//') ? fallback : path
}
