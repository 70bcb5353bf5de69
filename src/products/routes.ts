import type { AddFeatureRoutes } from '../http/feature.js';

export const addProductRoutes: AddFeatureRoutes = () => {};
