"""A small built-in recall fixture: sessions of coding work where the memory that answers a question is
terse ("that was it: ...") and what it is about is said by the memories around it, plus distractors that
share the question's words. BM25 over each memory alone cannot connect them; neighbour context can."""

from __future__ import annotations

SESSIONS: dict[str, list[str]] = {
    "s-pool": [
        "Orders service: Postgres connection pool exhausted under load, requests time out after 30 s",
        "Raising the pool size to 50 did not help, timeouts keep coming",
        "Root cause found: the retry decorator leaves transactions open; wrapped it in a context manager",
        "Load test passes now with 400 rps",
    ],
    "s-jwt": [
        "Users logged out every few minutes: the JWT refresh token expires too early",
        "Clock skew between the auth pods is about 90 seconds",
        "Fix: allow 2 minutes of leeway when validating exp and nbf claims",
    ],
    "s-flaky": [
        "test_upload_large_file fails on CI about one run in five",
        "It only fails when the temp dir is on tmpfs",
        "Answer: the fixture wrote 600 MB to a 512 MB tmpfs; moved it to the workspace dir",
    ],
    "s-build": [
        "Docker image for the API grew to 2.1 GB and deploys got slow",
        "Most of it is the build toolchain left in the final stage",
        "Multi-stage build: compile in a builder stage, copy only the wheel; now 180 MB",
    ],
    "s-cache": [
        "Product pages show stale prices for up to an hour after an update",
        "The Redis keys have no invalidation on write",
        "Now the price writer publishes an event and the cache deletes the product key on it",
    ],
    "s-migr": [
        "Alembic migration 0042 locks the users table for minutes in production",
        "Adding the column with a default rewrites the whole table on Postgres 10",
        "Split it: add the column nullable, backfill in batches, then set the default",
    ],
    # Distractors: the questions' words, in memories that do not answer them.
    "s-noise": [
        "Read about connection pool tuning in the Postgres docs",
        "Refresh the dashboard token list in the admin UI",
        "CI runs the upload tests in parallel now",
        "Docker compose file for local development updated",
        "Redis upgraded to 7.2 on staging",
        "Users table gets a new index on email",
        "Prices page redesign discussed with the product team",
        "Large file uploads are limited to 1 GB",
    ],
}

# (question, session, index of the answering memory in that session)
QUESTIONS: list[tuple[str, str, int]] = [
    ("why was the postgres connection pool exhausted?", "s-pool", 2),
    ("how did we stop users being logged out by the jwt refresh token?", "s-jwt", 2),
    ("what made test_upload_large_file flaky on CI?", "s-flaky", 2),
    ("how did we shrink the docker image of the api?", "s-build", 2),
    ("how are stale prices in the redis cache avoided?", "s-cache", 2),
    ("how do we avoid the migration locking the users table?", "s-migr", 2),
]

RUSSIAN: dict[str, list[str]] = {
    "s-ru-1": [
        "Сервис заказов падает при подключении к базе данных",
        "Причина: пул соединений исчерпан, транзакции не закрываются",
        "Исправили декоратор повторов, теперь соединения возвращаются в пул",
    ],
    "s-ru-2": [
        "Пользователи жалуются на медленную загрузку страницы каталога",
        "Добавили кэширование изображений на CDN",
    ],
    "s-ru-3": [
        "Миграция базы данных блокирует таблицу пользователей",
        "Разбили миграцию на три шага с заполнением пачками",
    ],
}
RUSSIAN_QUESTIONS: list[tuple[str, str, int]] = [
    ("почему исчерпан пул соединений с базой?", "s-ru-1", 1),
    ("кэширование картинок каталога", "s-ru-2", 1),
    ("как починили блокировку таблицы пользователей при миграции", "s-ru-3", 1),
]
