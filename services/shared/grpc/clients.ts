import { AccountsClient } from '../../../proto/gen/adserver/accounts/v1/accounts';
import { CreativeFilesClient } from '../../../proto/gen/adserver/inventory/v1/creative_files';
import { TagsClient } from '../../../proto/gen/adserver/inventory/v1/tags';
import { ForecastsClient } from '../../../proto/gen/adserver/inventory/v1/forecasts';
import { DraftsClient } from '../../../proto/gen/adserver/inventory/v1/drafts';
import { AdItemTasksClient } from '../../../proto/gen/adserver/inventory/v1/tasks';
import { CustomReportsClient } from '../../../proto/gen/adserver/reporting/v1/custom_reports';
import { EventIngestClient } from '../../../proto/gen/adserver/reporting/v1/events';
import { ReportsClient } from '../../../proto/gen/adserver/reporting/v1/reports';
import { SelfServeClient } from '../../../proto/gen/adserver/selfserve/v1/selfserve';
import { serviceClient } from './client';

/**
 * One typed client per downstream API. Requests and answers are the proto's messages; the channel
 * of each opens on its first call.
 */
export const accounts = serviceClient('accounts', AccountsClient);
export const creativeFiles = serviceClient('inventory', CreativeFilesClient);
export const tags = serviceClient('inventory', TagsClient);
export const forecasts = serviceClient('inventory', ForecastsClient);
export const drafts = serviceClient('inventory', DraftsClient);
export const adItemTasks = serviceClient('inventory', AdItemTasksClient);
export const reports = serviceClient('reporting', ReportsClient);
export const customReports = serviceClient('reporting', CustomReportsClient);
export const eventIngest = serviceClient('reporting', EventIngestClient);
export const selfServe = serviceClient('selfserve', SelfServeClient);
