// Starts the API reference of /docs (Swagger UI, from the same origin) on the OpenAPI document the page names.
'use strict'
const root = document.getElementById('api-reference')
window.SwaggerUIBundle({
  url: root.dataset.document,
  domNode: root,
  deepLinking: true,
  // The public validator would be asked about the document (and its badge is an image from another origin).
  validatorUrl: null,
})
