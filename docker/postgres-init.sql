-- Run once by the postgres image, on the first start with an empty data volume
-- (files in /docker-entrypoint-initdb.d are skipped when the volume already holds a cluster).
-- The service's own database, `app`, is created by POSTGRES_DB in docker-compose.yml.
-- Temporal keeps its history and its visibility (search) data in two databases of its own.
-- temporalio/auto-setup would also create them (it tolerates databases that already exist);
-- creating them here keeps the layout explicit and in one place.
CREATE DATABASE temporal;
CREATE DATABASE temporal_visibility;
