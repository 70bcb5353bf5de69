import { copyLines } from '../db/copy.js';
import { allowLongStatements, type Tx } from '../db/tx.js';
import { appendEvents, countBulkEventsForPlanner } from '../events/outbox.js';
import { validationError } from '../http/api-error.js';
import type { BodyLine } from '../http/body.js';
import { parseLineInput, parseLineObject } from '../http/ndjson-line.js';
import type { Actor } from '../ledger/sql.js';
import { loadUnitEvents } from '../load-units/events.js';
import { loadUnitErrors } from '../load-units/messages.js';
import { locationIdNotFound } from '../master-data/messages.js';
import { productErrors } from '../products/messages.js';
import { sentUnitFields } from './create-service.js';
import { unitEvents } from './events.js';
import {
  assignIntakeProducts,
  COPY_INTO_UNIT_INTAKE,
  createIntakeTables,
  firstOtherProductInLoadUnit,
  firstQuantityOfAnotherKind,
  firstUnknownLocation,
  firstUnknownSku,
  gatherIntakeLoadUnits,
  insertIntakeMovements,
  insertIntakeUnits,
  intakeRow,
  intakeUnitIdsAfter,
  obtainIntakeLoadUnits,
  type IntakeHolder,
} from './intake-sql.js';
import { intakeInLoadUnitSchema, intakeOnLocationSchema } from './schemas.js';

/** The units whose events are rendered at once: bounds what an intake of millions holds in memory. */
const EVENT_BATCH = 5000;

/**
 * One NDJSON line as a new unit and where it goes: with `actualLocation` onto that Location, else into the
 * LoadUnit at `transportUnitBK`/`luPos`; a line naming both is refused rather than guessed.
 */
function rowOfLine(line: BodyLine): string {
  const object = parseLineObject(line, 'a PackagingUnit object');
  if ('actualLocation' in object) {
    if ('transportUnitBK' in object || 'luPos' in object) {
      throw validationError([
        { path: `line ${line.number}`, message: 'give either transportUnitBK and luPos, or actualLocation' },
      ]);
    }
    const unit = parseLineInput(intakeOnLocationSchema, object, line);
    return intakeRow(
      line.number,
      { locationId: unit.actualLocation.locationId },
      unit.product.sku,
      sentUnitFields(unit),
    );
  }
  const unit = parseLineInput(intakeInLoadUnitSchema, object, line);
  const holder: IntakeHolder = {
    transportUnitBK: unit.transportUnitBK,
    luPos: unit.luPos,
    loadUnitType: unit.loadUnitType,
  };
  return intakeRow(line.number, holder, unit.product.sku, sentUnitFields(unit));
}

/** The checks of the single creates, each answering for the first line (by number) that fails it. */
async function refuseWhatSingleCreatesWould(tx: Tx, hasLoadUnits: boolean, mixedAllowed: boolean): Promise<void> {
  const unknownSku = await firstUnknownSku(tx);
  if (unknownSku !== undefined) throw productErrors.notFoundBySku(unknownSku);
  const otherKind = await firstQuantityOfAnotherKind(tx);
  if (otherKind) throw productErrors.quantityOfAnotherKind(`line ${otherKind.line}: quantity`, otherKind.kind);
  const unknownLocation = await firstUnknownLocation(tx);
  if (unknownLocation !== undefined) throw locationIdNotFound(unknownLocation);
  if (!hasLoadUnits) return;
  // LoadUnits are created before D17 is checked, as the single create does; a refusal rolls them back.
  const { missingType } = await obtainIntakeLoadUnits(tx);
  if (missingType) throw loadUnitErrors.loadUnitTypeMissing(missingType.position, missingType.transportUnitBK);
  if (!mixedAllowed) {
    const refused = await firstOtherProductInLoadUnit(tx);
    // D38: a LoadUnit this intake created is gone with its rollback; it is named as the client sent it.
    if (refused?.created) {
      throw loadUnitErrors.alreadyAssignedInIntake(refused.line, refused.transportUnitBK, refused.luPos, refused.sku);
    }
    if (refused) throw loadUnitErrors.alreadyAssigned(refused.loadUnitPKey, refused.sku);
  }
}

/** D27: the events of every inserted unit, read back and rendered as GET renders them, a batch at a time. */
async function appendUnitEvents(tx: Tx, requestId: string): Promise<void> {
  let appended = 0;
  for (let ids = await intakeUnitIdsAfter(tx, 0, EVENT_BATCH); ids.length > 0;) {
    const events = await unitEvents(
      tx,
      ids.map((id) => ({ type: 'pu.event.created' as const, id })),
    );
    await appendEvents(tx, events, requestId);
    appended += events.length;
    ids = await intakeUnitIdsAfter(tx, ids[ids.length - 1]!, EVENT_BATCH);
  }
  await countBulkEventsForPlanner(tx, appended);
}

export interface IntakeOptions {
  readonly actor: Actor;
  /** How long the intake's statements may take, the upload included (the HTTP request's own bound). */
  readonly timeoutMs: number;
  /** INVENTORY_MIXED_LOADUNITS: D17 does not apply. */
  readonly mixedAllowed: boolean;
}

/**
 * D35: a stock intake, all or nothing in the caller's transaction. The lines go through COPY into a staging table
 * as they arrive (the first invalid line ends the request, named), set-based statements then check them as the
 * single creates would (unknown SKU, quantity kind, unknown Location, loadUnitType, D17), create the missing
 * TransportUnits and LoadUnits, insert the units with their CREATE ledger rows, and append the events the single
 * creates would: the LoadUnits' first (by first line), then one `pu.event.created` per unit in line order.
 * Answers how many units were created.
 */
export async function intakeUnits(
  tx: Tx,
  lines: AsyncIterable<BodyLine>,
  { actor, timeoutMs, mixedAllowed }: IntakeOptions,
): Promise<number> {
  await allowLongStatements(tx, timeoutMs);
  await createIntakeTables(tx);
  let sent = 0;
  await copyLines(tx, COPY_INTO_UNIT_INTAKE, timeoutMs, lines, (line) => {
    sent++;
    return rowOfLine(line);
  });
  if (sent === 0) throw validationError([{ path: 'body', message: 'must contain at least one PackagingUnit' }]);
  const hasLoadUnits = await gatherIntakeLoadUnits(tx);
  await refuseWhatSingleCreatesWould(tx, hasLoadUnits, mixedAllowed);
  const loadUnitChanges = hasLoadUnits ? await assignIntakeProducts(tx) : [];
  await insertIntakeUnits(tx);
  const created = await insertIntakeMovements(tx, actor);
  await appendEvents(tx, await loadUnitEvents(tx, loadUnitChanges), actor.requestId);
  await appendUnitEvents(tx, actor.requestId);
  return created;
}
