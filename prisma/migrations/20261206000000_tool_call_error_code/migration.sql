-- A failed call keeps its error's type (INVALID_RECTANGLE, MEDIA_UNAVAILABLE, ...) beside its
-- message: an attempt that finds the call failed by another (a worker's first attempt of a crop)
-- answers the same error, not a generic PROVIDER_ERROR. Older failed calls have none.
ALTER TABLE "ToolCall" ADD COLUMN "errorCode" TEXT;
