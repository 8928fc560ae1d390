/*
 * The page an invite link opens. The token stays in the address bar: the script reads it there and
 * nothing from the request is written into the HTML, so the page is the same for everyone.
 */
const script = `
const token = new URLSearchParams(location.search).get('token') || ''
const status = document.getElementById('status')
const form = document.getElementById('form')
const say = (text) => { status.textContent = text }
fetch('/auth/reset/validate?token=' + encodeURIComponent(token)).then(async (res) => {
  if (!res.ok) return say('This link is invalid, was already used or has expired. Ask an admin for a new one.')
  const user = await res.json()
  say('Set a password for ' + (user.email || user.name || 'your account') + '.')
  form.hidden = false
}, () => say('Flagpost could not be reached.'))
form.addEventListener('submit', async (event) => {
  event.preventDefault()
  const password = form.elements.password.value
  if (password !== form.elements.confirm.value) return say('The two passwords differ.')
  const res = await fetch('/auth/reset/password', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, password }) })
  if (res.ok) { form.hidden = true; return say('Your password is set. You can now sign in.') }
  const error = await res.json().catch(() => ({}))
  say(error.message || 'The password could not be set.')
})
`

export function newUserPage(): { html: string; nonce: string } {
  const nonce = crypto.randomUUID().replaceAll('-', '')
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Flagpost: set your password</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}</style>
</head>
<body>
<h1>Welcome to Flagpost</h1>
<p id="status">Checking your link…</p>
<form id="form" hidden>
<label for="password">New password (at least 8 characters)</label>
<input id="password" name="password" type="password" minlength="8" maxlength="256" autocomplete="new-password" required>
<label for="confirm">Repeat it</label>
<input id="confirm" name="confirm" type="password" minlength="8" maxlength="256" autocomplete="new-password" required>
<button type="submit">Set password</button>
</form>
<script nonce="${nonce}">${script}</script>
</body>
</html>`
  return { html, nonce }
}
