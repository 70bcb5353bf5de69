import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Every schema imports z from here so `.openapi()` metadata is available wherever schemas are declared.
extendZodWithOpenApi(z);

export { z };
