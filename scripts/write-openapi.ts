import { writeFile } from 'node:fs/promises';
import { apiDocumentText, OPENAPI_FILE, servedApiDocument } from '../test/support/contract-document.js';

/** `npm run openapi`: writes the served OpenAPI document to openapi.json, the copy that tools and reviewers read. */
await writeFile(OPENAPI_FILE, await apiDocumentText(await servedApiDocument()));
