import type { Router } from 'express';
import { selfserveActions } from './selfserve';
import { adItemActions } from './ad-items';
import { tagActions } from './tags';
import { removedEndpoints } from './removed';
import { reportActions } from './reports';
import { customReportActions } from './custom-reports';
import { forecastActions } from './forecasts';
import { creativeUploadActions } from './creative-uploads';
import { draftActions } from './drafts';

/**
 * Operations beyond the catalog's CRUD, each a module that mounts its routes (and calls its service's
 * own typed gRPC API). They mount before the generic resource routes.
 */
export type ActionModule = (router: Router) => void;

export const ACTION_MODULES: ActionModule[] = [customReportActions, adItemActions, tagActions, selfserveActions, reportActions, forecastActions, creativeUploadActions, draftActions, removedEndpoints];
