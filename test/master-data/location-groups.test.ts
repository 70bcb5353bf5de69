import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/app.js';
import {
  BASE,
  get,
  givenGroups,
  HAL,
  putGroups,
  TIMESTAMP,
  unique,
  UUID,
  ignoreTeardownDisconnects,
} from './builders.js';

const ctx = useTestApp();
ignoreTeardownDisconnects(ctx);

const getGroup = (name: string) => get(ctx.app, `/v1/location-groups?name=${encodeURIComponent(name)}`);

async function storedGroup(name: string): Promise<Record<string, unknown>> {
  const response = await getGroup(name);
  expect(response.status).toBe(200);
  return response.body as Record<string, unknown>;
}

async function groupCount(names: readonly string[]): Promise<number> {
  const result = await ctx.db.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM location_group WHERE name = ANY($1)',
    [names],
  );
  return result.rows[0]!.n;
}

describe('PUT /v1/location-groups', () => {
  it('stores a child named before its parent in the same request and answers 204 without a body', async () => {
    const parent = unique('Parent');
    const child = unique('Child');

    const response = await putGroups(ctx.app, [{ name: child, parent }, { name: parent }]);

    expect(response.status).toBe(204);
    expect(response.text).toBe('');
    const stored = await getGroup(child);
    expect(stored.status).toBe(200);
    expect(stored.headers['content-type']).toBe(HAL);
    expect(stored.body).toEqual({
      pKey: expect.stringMatching(UUID),
      name: child,
      parent,
      ol: 0,
      createDt: expect.stringMatching(TIMESTAMP),
      _links: {
        self: { href: `${BASE}/v1/location-groups?name=${encodeURIComponent(child)}` },
        parent: { href: `${BASE}/v1/location-groups?name=${encodeURIComponent(parent)}` },
      },
    });
    expect(Object.keys(stored.body as object)).toEqual(['pKey', 'name', 'parent', 'ol', 'createDt', '_links']);
    expect(await storedGroup(parent)).not.toHaveProperty('parent');
  });

  it('resolves a parent among the stored groups', async () => {
    const parent = unique('Stored');
    const child = unique('Child');
    await givenGroups(ctx.app, { name: parent });

    expect((await putGroups(ctx.app, [{ name: child, parent }])).status).toBe(204);

    expect((await storedGroup(child)).parent).toBe(parent);
  });

  it('raises ol by one when a group changes and leaves it when the same state is sent again', async () => {
    const [a, b, child] = [unique('A'), unique('B'), unique('Child')];
    await givenGroups(ctx.app, { name: a }, { name: b }, { name: child, parent: a });
    const before = await storedGroup(child);

    await givenGroups(ctx.app, { name: child, parent: b });
    const moved = await storedGroup(child);
    await givenGroups(ctx.app, { name: child, parent: b });
    const same = await storedGroup(child);

    expect(moved).toMatchObject({ parent: b, ol: 1, pKey: before.pKey, createDt: before.createDt });
    expect(same).toMatchObject({ parent: b, ol: 1 });
  });

  it('clears the parent when it is left out (PUT replaces the group)', async () => {
    const [parent, child] = [unique('Parent'), unique('Child')];
    await givenGroups(ctx.app, { name: parent }, { name: child, parent });

    await givenGroups(ctx.app, { name: child, parent: null });

    const stored = await storedGroup(child);
    expect(stored).not.toHaveProperty('parent');
    expect(stored.ol).toBe(1);
  });

  it('ignores unknown and read-only fields', async () => {
    const name = unique('Extra');

    const response = await putGroups(ctx.app, [
      { name, pKey: 'not-a-key', ol: 42, createDt: 'yesterday', colour: 'blue', _links: {} },
    ]);

    expect(response.status).toBe(204);
    const stored = await storedGroup(name);
    expect(stored.pKey).not.toBe('not-a-key');
    expect(stored.ol).toBe(0);
  });

  it('answers 404 naming an unknown parent and stores nothing of the request', async () => {
    const [known, missing] = [unique('Known'), unique('Missing')];

    const response = await putGroups(ctx.app, [{ name: known }, { name: unique('Child'), parent: missing }]);

    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toBe(HAL);
    expect(response.body).toEqual({
      message: `LocationGroup with name [${missing}] not found`,
      messageKey: 'owms.common.common.lg.notFoundByName',
      obj: [missing],
      httpStatus: '404',
      class: 'String',
    });
    expect(await groupCount([known])).toBe(0);
  });

  it('answers 400 for a cycle within the request and stores nothing', async () => {
    const [a, b] = [unique('A'), unique('B')];

    const response = await putGroups(ctx.app, [
      { name: a, parent: b },
      { name: b, parent: a },
    ]);

    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: `[0].parent: makes a cycle ${a} → ${b} → ${a}; [1].parent: makes a cycle ${b} → ${a} → ${b}`,
      messageKey: 'core.validation.error',
      obj: ['[0].parent', '[1].parent'],
      httpStatus: '400',
    });
    expect(await groupCount([a, b])).toBe(0);
  });

  it('answers 400 for a cycle through stored groups and keeps the stored tree', async () => {
    const [top, middle, bottom] = [unique('Top'), unique('Middle'), unique('Bottom')];
    await givenGroups(ctx.app, { name: top }, { name: middle, parent: top }, { name: bottom, parent: middle });

    const response = await putGroups(ctx.app, [{ name: top, parent: bottom }]);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      messageKey: 'core.validation.error',
      obj: ['[0].parent'],
      message: `[0].parent: makes a cycle ${top} → ${bottom} → ${middle} → ${top}`,
    });
    expect(await storedGroup(top)).not.toHaveProperty('parent');
    expect((await storedGroup(top)).ol).toBe(0);
  });

  it('answers 400 for a group named as its own parent', async () => {
    const name = unique('Self');

    const response = await putGroups(ctx.app, [{ name, parent: name }]);

    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: '[0].parent: a group cannot be its own parent',
      messageKey: 'core.validation.error',
      obj: ['[0].parent'],
      httpStatus: '400',
    });
  });

  it('answers 400 naming each repeated name', async () => {
    const name = unique('Twice');

    const response = await putGroups(ctx.app, [{ name }, { name: unique('Other') }, { name, parent: null }]);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      message: '[2].name: duplicate of [0].name',
      messageKey: 'core.validation.error',
      obj: ['[2].name'],
    });
    expect(await groupCount([name])).toBe(0);
  });

  it('answers 400 naming the first 100 repeated names of a body that repeats more', async () => {
    const name = unique('Often');

    const response = await putGroups(
      ctx.app,
      Array.from({ length: 150 }, () => ({ name })),
    );

    expect(response.status).toBe(400);
    expect(response.body.obj).toEqual(Array.from({ length: 100 }, (_, index) => `[${index + 1}].name`));
    expect(response.body.message).toMatch(/^\[1\]\.name: duplicate of \[0\]\.name; /);
    expect(await groupCount([name])).toBe(0);
  });

  it.each([
    ['an empty array', [], ['body']],
    ['an object instead of an array', { name: 'x' }, ['body']],
    ['a missing name', [{ parent: 'x' }], ['[0].name']],
    ['a blank name', [{ name: '  ' }], ['[0].name']],
    ['a number as name (never coerced)', [{ name: 7 }], ['[0].name']],
    ['a blank parent', [{ name: 'ok' }, { name: 'fine', parent: '' }], ['[1].parent']],
    ['a NUL character in a name', [{ name: 'in\u0000side' }], ['[0].name']],
  ])('answers 400 core.validation.error for %s', async (_case, body, paths) => {
    const response = await putGroups(ctx.app, body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: paths, httpStatus: '400' });
    expect(response.body).not.toHaveProperty('class');
  });

  it('answers 401 without a token', async () => {
    const response = await request(ctx.app)
      .put('/v1/location-groups')
      .send([{ name: unique('NoToken') }]);

    expect(response.status).toBe(401);
  });

  it('lets concurrent upserts of the same groups all succeed', async () => {
    const names = Array.from({ length: 20 }, () => unique('Busy'));
    const body = names.map((name, index) => ({ name, parent: index === 0 ? null : names[index - 1] }));

    const responses = await Promise.all(
      Array.from({ length: 6 }, (_unused, n) => putGroups(ctx.app, n % 2 === 0 ? body : [...body].reverse())),
    );

    expect(responses.map((response) => response.status)).toEqual(Array(6).fill(204));
    expect(await groupCount(names)).toBe(20);
  });

  it('refuses the second of two concurrent requests that together would make a cycle', async () => {
    const [a, b] = [unique('A'), unique('B')];
    await givenGroups(ctx.app, { name: a }, { name: b });

    const responses = await Promise.all([
      putGroups(ctx.app, [{ name: a, parent: b }]),
      putGroups(ctx.app, [{ name: b, parent: a }]),
    ]);

    expect(responses.map((response) => response.status).sort()).toEqual([204, 400]);
  });
});

describe('GET /v1/location-groups', () => {
  it('answers 404 with the group key for an unknown name', async () => {
    const name = unique('Nowhere');

    const response = await getGroup(name);

    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: `LocationGroup with name [${name}] not found`,
      messageKey: 'owms.common.common.lg.notFoundByName',
      obj: [name],
      httpStatus: '404',
      class: 'String',
    });
  });

  it('answers 400 without a name', async () => {
    const response = await get(ctx.app, '/v1/location-groups');

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ messageKey: 'core.validation.error', obj: ['name'] });
  });
});
