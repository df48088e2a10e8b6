"""A corpus of fake but realistic secrets, in the forms people paste, and of ordinary text that must stay.

Every value is generated here from a fixed seed (none is a real credential). `SECRETS` holds (family, text,
needles): the text as it would be pasted or printed, and the strings that must never reach the disk (the
secret, and for a token wrapped over lines each of its pieces). `ORDINARY` holds text that looks close to a
secret and must come through the filter unchanged.
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20261124)
B62 = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = B62 + "+/"


def rand(n: int, alphabet: str = B62) -> str:
    """n random characters with at least one digit, one lower- and one upper-case letter where possible."""
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        classes = [set(value) & set(c) for c in (string.digits, string.ascii_lowercase, string.ascii_uppercase)]
        wanted = [set(alphabet) & set(c) for c in (string.digits, string.ascii_lowercase, string.ascii_uppercase)]
        if all(have or not want for have, want in zip(classes, wanted, strict=True)):
            return value


def password() -> str:
    return rand(6, string.ascii_lowercase) + rand(3, string.digits) + _rng.choice("!#%^*+") + rand(4)


SECRETS: list[tuple[str, str, list[str]]] = []


def add(family: str, template: str, *values: str) -> None:
    """A text with {0}, {1}... filled by the secret values."""
    SECRETS.append((family, template.format(*values), list(values)))


# --- the forms the issue lists ------------------------------------------------------------------------
for name in ("PGPASSWORD", "MYSQL_PWD", "RSYNC_PASSWORD", "REDISPASSWORD", "DBPASSWORD", "SMTPPASSWORD"):
    add("env-password", f"{name}={{0}} psql -h db.internal -U app", password())
add("env-password", "export PGPASSWORD='{0}'", password())
add("env-password", "docker run -e POSTGRES_PASSWORD={0} postgres:16", password())
add("dict-password", "env = {{'PGPASSWORD': '{0}', 'PGUSER': 'app'}}", password())
add("dict-password", '{{"PGPASSWORD": "{0}", "PGHOST": "db"}}', password())
add("dict-password", '{{"dbPassword":"{0}"}}', password())
add("dict-password", "os.environ['MYSQLPASSWORD'] = '{0}'", password())
add("mysql-p", "mysql -u root -p{0} shop < dump.sql", password())
add("mysql-p", "mysqldump -h 10.0.0.5 -uadmin -p'{0}' --all-databases", password())
add("mysql-p", "mariadb -u app -p{0} -e 'select 1'", password())
add("psql-password", "psql --password {0} -h db -U app", password())
add("psql-password", "pg_dump --password={0} app > app.sql", password())
add("sshpass", "sshpass -p {0} ssh deploy@10.0.0.7", password())
add("sshpass", "sshpass -p'{0}' scp build.tgz ci@host:/tmp", password())
add("docker-login", "docker login -u ci -p {0} registry.example.com", password())
add("docker-login", "podman login --password {0} quay.io", password())
add("docker-login", "echo {0} | docker login --username ci --password-stdin ghcr.io", rand(24))
for user, pw in (("admin", password()), ("ci-bot", rand(20))):
    b = base64.b64encode(f"{user}:{pw}".encode()).decode()
    SECRETS.append(("basic-auth", f"curl -H 'Authorization: Basic {b}' https://api.example.com", [b]))
    SECRETS.append(("basic-auth", f"Authorization: Basic {b}", [b]))
add("redis-url", "REDIS_URL=redis://:{0}@cache.internal:6379/0", password())
add("redis-url", "rediss://:{0}@redis.example.com:6380", rand(32))
add("url-password-at", "postgres://app:{0}@db.internal:5432/shop", "p@ss" + rand(8) + "@x")
add("url-password-slash", "mongodb://root:{0}@mongo:27017/admin", "pa/ss" + rand(8) + "/w0")
add("url-password-slash", "amqp://guest:{0}@rabbit:5672/vhost", rand(10) + "/" + rand(6) + "@" + rand(4))
AZ = rand(86, B64) + "=="
add("azure-account-key", "DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey={0};"
    "EndpointSuffix=core.windows.net", AZ)
add("azure-account-key", "Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={0}",
    rand(43, B64) + "=")
add("slack-webhook", "curl -X POST https://hooks.slack.com/services/{0}/{1}/{2}", "T" + rand(8, string.ascii_uppercase
                                                                                            + string.digits),
    "B" + rand(10, string.ascii_uppercase + string.digits), rand(24))
add("slack-webhook", "SLACK_WEBHOOK: https://hooks.slack.com/workflows/{0}/{1}", "T" + rand(10, string.ascii_uppercase),
    rand(30))
add("password-sentence", "my password is {0} so use that", password())
add("password-sentence", "My password is {0}.", rand(12))
add("password-sentence", "the wifi password is {0}", password())
add("password-sentence", "our admin password was '{0}' until yesterday", rand(10, string.ascii_lowercase))
add("password-sentence", "The root password is now {0}", password())
add("password-sentence", "FYI your new password is: {0}", password())
add("password-sentence", "the api key is {0}, keep it safe", rand(32, HEX))
_SLACK = "xoxb-" + rand(12, string.digits) + "-"
for family, prefix, n in (("github-token", "ghp_", 36), ("anthropic-key", "sk-ant-api03-", 93),
                          ("openai-key", "sk-proj-", 120), ("slack-token", _SLACK, 24)):
    tok = prefix + rand(n)
    a, b, c = tok[:30], tok[30:60], tok[60:]
    parts = [p for p in (a, b, c) if p]
    SECRETS.append((f"{family}-wrapped", f"export TOKEN_VALUE=\\\n{a}\n{b}\n{c}\nnext step", [tok, *[p for p in parts
                                                                                                 if len(p) >= 8]]))
tok = "ghp_" + rand(36)
SECRETS.append(("github-token-wrapped", f"token: {tok[:10]}\n{tok[10:]}", [tok, tok[10:]]))
jwt = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + base64.urlsafe_b64encode(
    json.dumps({"sub": rand(12), "iat": 1764000000}).encode()).decode().rstrip("=") + "." + rand(86, B62 + "-_")
SECRETS.append(("jwt-wrapped", f"id_token\n{jwt[:64]}\n{jwt[64:128]}\n{jwt[128:]}", [jwt, jwt[64:128], jwt[128:]]))
for tok in ("ghp_" + rand(36), "sk-ant-api03-" + rand(80), "xoxp-" + rand(11, string.digits) + "-" + rand(30),
            "AKIA" + rand(16, string.ascii_uppercase + string.digits), "glpat-" + rand(20)):
    b = base64.b64encode(tok.encode()).decode()
    SECRETS.append(("base64-wrapped", f"echo {b} | base64 -d > ~/.token", [b, tok]))
pw = password()
b = base64.b64encode(pw.encode()).decode()
SECRETS.append(("base64-wrapped", f"apiVersion: v1\nkind: Secret\ndata:\n  password: {b}\n", [b]))
b = base64.b64encode(f'{{"password": "{pw}x"}}'.encode()).decode()
SECRETS.append(("base64-wrapped", f"CONFIG_B64={b}", [b, pw + "x"]))
pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + rand(48, B64) + "\n-----END RSA PRIVATE KEY-----\n"
b = base64.b64encode(pem.encode()).decode()
SECRETS.append(("base64-wrapped", f"client-key-data: {b}", [b]))

# --- database and broker URLs of every scheme ---------------------------------------------------------
for scheme in ("postgres", "postgresql", "postgresql+psycopg", "mysql", "mysql+pymysql", "mariadb", "mongodb",
               "mongodb+srv", "redis", "rediss", "amqp", "amqps", "kafka", "nats", "mssql", "sqlserver", "oracle",
               "cockroachdb", "clickhouse", "couchbase", "neo4j", "bolt", "ldap", "ftp", "sftp", "smtp", "https",
               "git+https", "memcached", "elasticsearch"):
    add("url-password", f"{scheme}://svc_user:{{0}}@host.internal:1234/db", password())
add("url-password", "pip install --index-url https://__token__:{0}@pypi.example.com/simple pkg", rand(40))
add("url-password", "git clone https://oauth2:{0}@gitlab.example.com/team/app.git", rand(20))
add("url-password", "jdbc:postgresql://db:5432/shop?user=app&password={0}&ssl=true", password())
add("url-password", "Server=tcp:sql.example.net,1433;Database=shop;User Id=sa;Password={0};Encrypt=True;",
    password())
add("url-password", "SENTRY_DSN=https://{0}@o12345.ingest.sentry.io/678", rand(32, HEX))

# --- CLI password flags -------------------------------------------------------------------------------
add("cli-flag", "mysqladmin --user=root --password={0} status", password())
add("cli-flag", "redis-cli -h cache -a {0} ping", password())
add("cli-flag", "mongosh --username admin --password {0} mongodb://db", password())
add("cli-flag", "mongodump -u admin -p {0} --db shop", password())
add("cli-flag", "ldapsearch -x -D cn=admin,dc=example -w {0} -b dc=example", password())
add("cli-flag", "sqlcmd -S db -U sa -P {0} -Q 'select 1'", password())
add("cli-flag", "curl -u deploy:{0} https://nexus.example.com/repo", password())
add("cli-flag", "curl --user admin:{0} -X DELETE https://es:9200/idx", password())
add("cli-flag", "wget --user=ci --password={0} https://files.example.com/a.tgz", password())
add("cli-flag", "zip -P {0} backup.zip secrets.txt", password())
add("cli-flag", "7z a -p{0} archive.7z folder", password())
add("cli-flag", "openssl pkcs12 -export -in c.pem -passout pass:{0} -out c.p12", password())
add("cli-flag", "keytool -importkeystore -srcstorepass {0} -deststorepass {1}", password(), password())
add("cli-flag", "smbclient //fs/share -U backup%{0}", password())
add("cli-flag", "sqlplus system/{0}@//db:1521/ORCL", password())
add("cli-flag", "vault-cli --token {0} read secret/app", rand(28))
add("cli-flag", "app deploy --api-key {0} --region eu", rand(32))
add("cli-flag", "helm repo add corp https://charts.example.com --username ci --password {0}", password())
add("cli-flag", "az login -u ops@example.com -p {0}", password())
add("cli-flag", "gh-release --client-secret={0}", rand(40))

# --- .netrc, .npmrc, .pypirc ---------------------------------------------------------------------------
add("netrc", "machine api.github.com login octo password {0}", "ghp_" + rand(36))
add("netrc", "machine ftp.example.com\n  login backup\n  password {0}\n", password())
add("npmrc", "//registry.npmjs.org/:_authToken={0}", "npm_" + rand(36))
add("npmrc", "//npm.pkg.github.com/:_authToken={0}\n@corp:registry=https://npm.pkg.github.com", rand(40))
add("npmrc", "_auth={0}\nalways-auth=true", base64.b64encode(f"ci:{password()}".encode()).decode())
add("npmrc", "//nexus.example.com/repository/npm/:_password={0}", base64.b64encode(password().encode()).decode())
add("pypirc", "[pypi]\nusername = __token__\npassword = {0}\n", "pypi-AgEIcHlwaS5vcmc" + rand(70, B62 + "-_"))
add("pypirc", "[testpypi]\nrepository = https://test.pypi.org/legacy/\nusername = ci\npassword = {0}\n", password())

# --- Bearer and other headers --------------------------------------------------------------------------
add("bearer", "curl -H \"Authorization: Bearer {0}\" https://api.example.com/v1/me", rand(40, B62 + "._-"))
add("bearer", "Authorization: token {0}", "gho_" + rand(36))
add("bearer", "headers = {{'Authorization': 'Bearer {0}'}}", rand(48))
add("bearer", "x-api-key: {0}", rand(40))
add("bearer", "X-Auth-Token: {0}", rand(32, HEX))
add("bearer", "Cookie: sessionid={0}; csrftoken={1}", rand(32), rand(32))
add("bearer", "requests.get(url, headers={{\"PRIVATE-TOKEN\": \"{0}\"}})", "glpat-" + rand(20))

# --- cloud providers -----------------------------------------------------------------------------------
for _ in range(3):
    add("aws", "aws_access_key_id = {0}\naws_secret_access_key = {1}", "AKIA" + rand(16, string.ascii_uppercase
                                                                                      + string.digits),
        rand(40, B64))
add("aws", '{{"AccessKeyId": "{0}", "SecretAccessKey": "{1}", "SessionToken": "{2}"}}',
    "ASIA" + rand(16, string.ascii_uppercase + string.digits), rand(40, B64), "IQoJb3JpZ2luX2Vj" + rand(200, B64))
add("aws", "export AWS_SECRET_ACCESS_KEY={0}", rand(40, B64))
add("aws", "https://bucket.s3.amazonaws.com/a.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature={0}",
    rand(64, HEX))
add("gcp", "key=AIza{0}", rand(35, B62 + "-_"))
add("gcp", "GOOGLE_API_KEY=AIza{0}", rand(35))
add("gcp", "access_token: ya29.{0}", rand(120, B62 + "-_"))
add("gcp", "client_secret=GOCSPX-{0}", rand(28, B62 + "-_"))
add("gcp", '"refresh_token": "1//0{0}"', rand(60, B62 + "-_"))
add("azure", "AZURE_CLIENT_SECRET={0}", rand(3) + "8Q~" + rand(34, B62 + "_~.-"))
add("azure", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&ss=b&srt=o&sp=r&sig={0}", rand(44, B62) + "%3D")
add("azure", '"storageKey": "{0}"', rand(86, B64) + "==")

# --- SaaS tokens ---------------------------------------------------------------------------------------
for family, value in (
    ("github", "ghp_" + rand(36)), ("github", "gho_" + rand(36)), ("github", "ghs_" + rand(36)),
    ("github", "ghu_" + rand(36)), ("github", "github_pat_11" + rand(20) + "_" + rand(59)),
    ("gitlab", "glpat-" + rand(20)), ("gitlab", "glrt-" + rand(20)), ("gitlab", "gldt-" + rand(20)),
    ("slack", "xoxb-" + rand(12, string.digits) + "-" + rand(13, string.digits) + "-" + rand(24)),
    ("slack", "xoxp-" + rand(12, string.digits) + "-" + rand(32)), ("slack", "xapp-1-A" + rand(10) + "-" + rand(40)),
    ("stripe", "sk_live_" + rand(24)), ("stripe", "rk_live_" + rand(24)), ("stripe", "whsec_" + rand(32)),
    ("stripe", "sk_test_" + rand(24)),
    ("openai", "sk-" + rand(48)), ("openai", "sk-proj-" + rand(100, B62 + "-_")),
    ("openai", "sk-svcacct-" + rand(60, B62 + "-_")),
    ("anthropic", "sk-ant-api03-" + rand(93, B62 + "-_")), ("anthropic", "sk-ant-admin01-" + rand(80, B62 + "-_")),
    ("npm", "npm_" + rand(36)), ("pypi", "pypi-AgEIcHlwaS5vcmc" + rand(80, B62 + "-_")),
    ("sendgrid", "SG." + rand(22, B62 + "-_") + "." + rand(43, B62 + "-_")),
    ("huggingface", "hf_" + rand(34)), ("digitalocean", "dop_v1_" + rand(64, HEX)),
    ("shopify", "shpat_" + rand(32, HEX)), ("databricks", "dapi" + rand(32, HEX)),
    ("vault", "hvs." + rand(90, B62 + "_-")), ("docker", "dckr_pat_" + rand(27, B62 + "_-")),
    ("linear", "lin_api_" + rand(40)), ("groq", "gsk_" + rand(52)), ("replicate", "r8_" + rand(37)),
    ("grafana", "glsa_" + rand(32) + "_" + rand(8, HEX)), ("supabase", "sbp_" + rand(40, HEX)),
    ("atlassian", "ATATT3xFfGF0" + rand(180, B62 + "-_=")), ("newrelic", "NRAK-" + rand(27, string.ascii_uppercase
                                                                                       + string.digits)),
    ("postman", "PMAK-" + rand(24, HEX) + "-" + rand(34, HEX)), ("mailgun", "key-" + rand(32, HEX)),
    ("telegram", rand(10, string.digits) + ":AA" + rand(33, B62 + "_-")),
    ("age", "AGE-SECRET-KEY-1" + rand(58, string.ascii_uppercase + string.digits)),
):
    SECRETS.append((family, f"using {value} for the request", [value]))
    SECRETS.append((family, f"{family.upper()}_CREDENTIAL=\"{value}\"", [value]))
add("twilio", "TWILIO_AUTH_TOKEN={0}", rand(32, HEX))
add("twilio", "client = Client('AC{0}', '{1}')  # twilio auth token", rand(32, HEX), rand(32, HEX))
add("datadog", "DD_API_KEY={0}", rand(32, HEX))
for _ in range(2):
    add("jwt", "Cookie token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{0}.{1} expired",
        base64.urlsafe_b64encode(json.dumps({"sub": rand(10), "admin": True}).encode()).decode().rstrip("="),
        rand(43, B62 + "-_"))

# --- private keys: PEM and JSON forms -------------------------------------------------------------------
for label in ("RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY",
              "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"):
    body = "\n".join(rand(64, B64) for _ in range(4))
    SECRETS.append(("private-key", f"$ cat key.pem\n-----BEGIN {label}-----\n{body}\n-----END {label}-----\n",
                    body.split("\n")))
body = "\\n".join(rand(64, B64) for _ in range(3))
SECRETS.append(("private-key-json", json.dumps({
    "type": "service_account", "project_id": "shop-prod", "private_key_id": rand(40, HEX),
    "private_key": f"-----BEGIN PRIVATE KEY-----\\n{body}\\n-----END PRIVATE KEY-----\\n",
    "client_email": "ci@shop-prod.iam.gserviceaccount.com"}).replace("\\\\n", "\\n"), body.split("\\n")))
body = "\n".join(rand(64, B64) for _ in range(3))
SECRETS.append(("private-key-json", "credentials = {\n  \"private_key\": \"-----BEGIN PRIVATE KEY-----\n" + body
                + "\n-----END PRIVATE KEY-----\n\"\n}", body.split("\n")))
d, p = rand(86, B62 + "-_"), rand(43, B62 + "-_")
SECRETS.append(("private-key-jwk", json.dumps({"kty": "RSA", "n": "0vx7ago", "e": "AQAB", "d": d, "p": p}), [d, p]))
body = "\n".join(rand(64, B64) for _ in range(3))
SECRETS.append(("private-key-putty", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 3\n"
                + body + "\nPrivate-MAC: abc", body.split("\n")))

# --- key=value and JSON/dict forms for any secret-ish name ----------------------------------------------
for name in ("password", "DB_PASSWORD", "db.password", "passwd", "passphrase", "admin_pass", "secret", "SECRET_KEY",
             "client_secret", "clientSecret", "app-secret", "api_key", "apiKey", "API-KEY", "auth_token", "authToken",
             "access_token", "refresh_token", "token", "GITHUB_TOKEN", "private_key", "encryption_key", "master_key",
             "credentials", "signing_secret", "webhook_secret", "jwt_secret", "session_secret", "SECRET_KEY_BASE",
             "csrftoken"):
    value = rand(24) if "key" in name.lower() or "token" in name.lower() else password()
    add("assigned", f"{name}={{0}}", value)
    add("assigned", f'"{name}": "{{0}}",', value)
    add("assigned", f"{name}: '{{0}}'", value)
add("assigned", "<password>{0}</password>", password())
add("assigned", '<add key="DbPassword" value="{0}" />', password())
add("assigned", "$db_password = '{0}';", password())
add("assigned", "'password' => '{0}',", password())
add("assigned", "PASSWORD_PROD=\"{0}\"", password())
add("assigned", "ALTER USER app WITH PASSWORD '{0}';", password())
add("assigned", "CREATE USER 'app'@'%' IDENTIFIED BY '{0}';", password())
add("assigned", "password = \"correct horse {0} staple\"", rand(8))
add("password-hash", "app:{0}", "$2b$12$" + rand(53, B62 + "./"))

# --- issue 25: forms a review found unseen --------------------------------------------------------------
UP = string.ascii_uppercase + string.digits


def discord_id(first: int = 1) -> str:
    """A Discord bot's id (a snowflake: 18 or 19 digits) in base64, as its token starts."""
    digits = str(first) + "".join(_rng.choice(string.digits) for _ in range(18 if first == 1 else 17))
    return base64.b64encode(digits.encode()).decode().rstrip("=")


# chat-platform bot tokens
for _ in range(2):
    add("chat-discord", "DISCORD_BOT_TOKEN={0}", discord_id() + "." + rand(6, B62 + "-_") + "." + rand(38, B62 + "-_"))
add("chat-discord", "client.run('{0}')", discord_id(8) + "." + rand(6, B62 + "-_") + "." + rand(27, B62 + "-_"))
add("chat-discord", "bot token {0} for the guild",
    discord_id() + "." + rand(6, B62 + "-_") + "." + rand(38, B62 + "-_"))
add("chat-telegram", "bot = telebot.TeleBot(\"{0}\")", rand(10, string.digits) + ":AA" + rand(33, B62 + "_-"))
add("chat-telegram", "curl https://api.telegram.org/bot{0}/getMe",
    rand(9, string.digits) + ":AA" + rand(33, B62 + "_-"))
add("chat-telegram", "TELEGRAM_TOKEN: {0}", rand(10, string.digits) + ":AAE" + rand(32, B62 + "_-"))
add("chat-slack", "SLACK_APP_TOKEN=xapp-1-A{0}", rand(10, UP) + "-" + rand(13, string.digits) + "-" + rand(64, HEX))
add("chat-slack", "refresh with {0}", "xoxe-1-" + rand(140, B62))
add("chat-slack", "config token {0}", "xoxe.xoxp-1-" + rand(150, B62))
add("chat-slack", "legacy {0}", "xoxa-2-" + rand(12, string.digits) + "-" + rand(32))
add("chat-slack", "SLACK_SIGNING_SECRET={0}", rand(32, HEX))
add("chat-slack", "curl -H 'Authorization: Bearer {0}' --cookie 'd={1}'", "xoxc-" + rand(12, string.digits) + "-"
    + rand(12, string.digits) + "-" + rand(64, HEX), "xoxd-" + rand(60))
add("chat-mattermost", "MM_BOT_TOKEN={0}", rand(26, string.ascii_lowercase + string.digits))
add("chat-webhook", "https://discord.com/api/webhooks/{0}/{1}", rand(18, string.digits), rand(68, B62 + "-_"))
# provider auth tokens by prefix
for family, value in (
    ("provider-hf", "hf_" + rand(34)), ("provider-hf", "api_org_" + rand(34)),
    ("provider-databricks", "dapi" + rand(32, HEX) + "-2"), ("provider-do", "dop_v1_" + rand(64, HEX)),
    ("provider-do", "doo_v1_" + rand(64, HEX)), ("provider-shopify", "shpss_" + rand(32, HEX)),
    ("provider-mailgun", "key-" + rand(32, HEX)), ("provider-heroku", "HRKU-AA" + rand(58, B62 + "_-")),
    ("provider-vault", "hvs.CAESI" + rand(80, B62 + "_-")), ("provider-vault", "hvb.AAAAAQ" + rand(120, B62 + "_-")),
    ("provider-doppler", "dp.pt." + rand(43)), ("provider-doppler", "dp.st.prd." + rand(43)),
    ("provider-doppler", "dp.sa." + rand(43)), ("provider-linear", "lin_api_" + rand(40)),
    ("provider-linear", "lin_oauth_" + rand(64, HEX)), ("provider-notion", "secret_" + rand(43)),
    ("provider-notion", "ntn_" + rand(46)), ("provider-atlassian", "ATATT3xFfGF0" + rand(170, B62 + "-_") + "=" +
                                                    rand(8, HEX).upper()),
    ("provider-atlassian", "ATCTT3xFfGN0" + rand(170, B62 + "-_")), ("provider-gcp", "ya29.a0" + rand(150, B62 + "-_")),
    ("provider-planetscale", "pscale_tkn_" + rand(43, B62 + "_-")), ("provider-planetscale", "pscale_pw_" + rand(43)),
    ("provider-sentry", "sntrys_eyJpYXQiOjE3" + rand(120, B62 + "_")), ("provider-sentry", "sntryu_" + rand(64, HEX)),
    ("provider-posthog", "phx_" + rand(47)), ("provider-resend", "re_" + rand(8) + "_" + rand(24)),
    ("provider-brevo", "xkeysib-" + rand(64, HEX) + "-" + rand(16)), ("provider-pinecone", "pcsk_" + rand(6) + "_" +
                                                                     rand(60)),
    ("provider-contentful", "CFPAT-" + rand(43, B62 + "_-")), ("provider-nuget", "oy2" + rand(43, string.ascii_lowercase
                                                                                        + string.digits)),
    ("provider-tailscale", "tskey-auth-k" + rand(16) + "-" + rand(33)), ("provider-tailscale", "tskey-api-k" + rand(16)
                                                                         + "-" + rand(33)),
    ("provider-perplexity", "pplx-" + rand(48)), ("provider-nvidia", "nvapi-" + rand(64, B62 + "-_")),
    ("provider-rubygems", "rubygems_" + rand(48, HEX)), ("provider-1password", "ops_eyJzaWduSW5BZGRyZXNzIjoi" +
                                                         rand(200, B62 + "_-")),
    ("provider-terraform", rand(14) + ".atlasv1." + rand(67)), ("provider-square", "sq0atp-" + rand(22, B62 + "-_")),
    ("provider-square", "sq0csp-" + rand(43, B62 + "-_")), ("provider-shippo", "shippo_live_" + rand(40, HEX)),
    ("provider-easypost", "EZAK" + rand(54, HEX + "ABCDEF")), ("provider-twitter", "AAAAAAAAAAAAAAAAAAAAA" + rand(60)
                                                                   + "%3D" + rand(40)),
    ("provider-facebook", "EAAB" + rand(180)), ("provider-grafana", "glc_eyJvIjoi" + rand(120, B62 + "=")),
    ("provider-netlify", "nfp_" + rand(40)), ("provider-fireworks", "fw_" + rand(24)),
    ("provider-langsmith", "lsv2_sk_" + rand(32, HEX) + "_" + rand(10, HEX)), ("provider-jfrog", "AKCp" + rand(69)),
    ("provider-dynatrace", "dt0c01." + rand(24, UP) + "." + rand(64, UP)),
):
    SECRETS.append((family, f"export TOKEN={value}", [value]))
    SECRETS.append((family, f"the token is {value}", [value]))
    SECRETS.append((family, f"run: deploy {value} --prod", [value]))  # no name: the shape alone
# provider keys that have no prefix: the name of the variable says what they are
UUID = f"{rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(12, HEX)}"
for name, value in (("HEROKU_API_KEY", UUID), ("CLOUDFLARE_API_TOKEN", rand(40, B62 + "_-")),
                    ("VERCEL_TOKEN", rand(24)), ("CIRCLECI_TOKEN", rand(40, HEX)), ("ALGOLIA_ADMIN_KEY", rand(32, HEX)),
                    ("MAPBOX_SECRET", "sk.eyJ1Ijoi" + rand(60, B62 + ".")), ("COHERE_API_KEY", rand(40)),
                    ("MISTRAL_API_KEY", rand(32)), ("PUSHER_APP_SECRET", rand(20, HEX)), ("NEWRELIC_LICENSE_KEY",
                                                                                            rand(40, HEX)),
                    ("VAULT_TOKEN", "s." + rand(24)), ("OKTA_API_TOKEN", "00" + rand(40, B62 + "-_"))):
    add("provider-context", f"{name}={{0}}", value)
add("provider-context", "AZURE_STORAGE_SAS_TOKEN=sv=2022-11-02&ss=b&srt=o&sp=rwdlac&se=2026-12-31&sig={0}",
    rand(43) + "%3D")
# constants in language-specific forms
for template in ("define('DB_PASSWORD', '{0}');", 'define("AUTH_KEY", "{0}");', "SECRET = '{0}'",
                 "STRIPE_SECRET_KEY = \"{0}\".freeze", 'const apiKey = "{0}"', 'const apiKey string = "{0}"',
                 'private static final String PASSWORD = "{0}";', 'public static final String API_KEY = "{0}";',
                 'const val API_TOKEN = "{0}"', 'private val clientSecret: String = "{0}"', '#define API_KEY "{0}"',
                 '#define DB_PASS  "{0}"', 'const TOKEN: &str = "{0}";', 'static SECRET_KEY: &\'static str = "{0}";',
                 'let apiKey: String = "{0}"', 'API_KEY: Final[str] = "{0}"', "export const stripeSecretKey: string = "
                 "'{0}';", 'var dbPassword = "{0}";', 'Dim password As String = "{0}"', 'my $password = "{0}";',
                 '(def api-key "{0}")', 'string connectionPassword = @"{0}";', "set -x AWS_SECRET_ACCESS_KEY {0}",
                 '$env:API_TOKEN = "{0}"', "setx API_KEY {0}", 'os.environ.setdefault("SECRET_KEY", "{0}")',
                 'System.setProperty("db.password", "{0}");', 'config.set("api_token", "{0}")',
                 'headers.put("X-Api-Key", "{0}");', 'ENV["GITHUB_TOKEN"] ||= "{0}"',
                 "Environment=\"DB_PASSWORD={0}\""):
    add("const-lang", template, password() if "pass" in template.lower() else rand(32))
# multi-entry credential files: every entry, not only the first
hosts = ["api.github.com", "gitlab.example.com", "ftp.example.net"]
pws = [password(), "ghp_" + rand(36), rand(20)]
add("multi-netrc", "\n".join(f"machine {h}\n  login u{i}\n  password {{{i}}}" for i, h in enumerate(hosts)), *pws)
add("multi-netrc", " ".join(f"machine {h} login u{i} password {{{i}}}" for i, h in enumerate(hosts)), *pws)
add("multi-pgpass", "db1.internal:5432:shop:app:{0}\ndb2.internal:5432:*:report:{1}\n*:*:*:admin:{2}\n",
    password(), password(), password())
add("multi-aws", "[default]\naws_access_key_id = {0}\naws_secret_access_key = {1}\n\n[prod]\naws_access_key_id = {2}\n"
    "aws_secret_access_key = {3}\naws_session_token = {4}\n", "AKIA" + rand(16, UP), rand(40, B64),
    "AKIA" + rand(16, UP),
    rand(40, B64), "IQoJb3JpZ2luX2Vj" + rand(120, B64))
add("multi-git-credentials", "https://u1:{0}@github.com\nhttps://oauth2:{1}@gitlab.com\nhttps://bot:{2}@bitbucket.org\n",
    "ghp_" + rand(36), "glpat-" + rand(20), rand(24))
add("multi-htpasswd", "alice:{0}\nbob:{1}\ncarol:{2}\n", "$apr1$" + rand(8) + "$" + rand(22, B62 + "./"),
    "$2y$10$" + rand(53, B62 + "./"),
    "{SHA}" + base64.b64encode(bytes(_rng.getrandbits(8) for _ in range(20))).decode())
add("multi-npmrc", "//registry.npmjs.org/:_authToken={0}\n//npm.pkg.github.com/:_authToken={1}\n"
    "//gitlab.example.com/api/v4/packages/npm/:_authToken={2}\n", "npm_" + rand(36), "ghp_" + rand(36),
    "glpat-" + rand(20))
add("multi-pypirc", "[pypi]\nusername = __token__\npassword = {0}\n\n[internal]\nusername = ci\npassword = {1}\n",
    "pypi-AgEIcHlwaS5vcmc" + rand(60, B62 + "-_"), password())
add("multi-env", "DB_PASSWORD={0}\nREDIS_PASSWORD={1}\nSMTP_PASSWORD={2}\n", password(), password(), password())
add("multi-docker-config", '{{"auths": {{"ghcr.io": {{"auth": "{0}"}}, "registry.example.com": {{"auth": "{1}"}}}}}}',
    base64.b64encode(f"u:{password()}".encode()).decode(), base64.b64encode(f"ci:{rand(24)}".encode()).decode())
# key files other than PEM and OpenSSH
body = "\n".join(rand(64, B64) for _ in range(2))
SECRETS.append(("keyfile-putty", "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: rsa-key\nPublic-Lines: 1\n"
                f"AAAAB3NzaC1yc2E\nPrivate-Lines: 2\n{body}\nPrivate-MAC: {rand(40, HEX)}\n", body.split("\n")))
body = "\n".join(rand(64, B64) for _ in range(3))
SECRETS.append(("keyfile-pgp", f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF{body}\n=abcd\n"
                "-----END PGP PRIVATE KEY "
                "BLOCK-----", body.split("\n")))
d = rand(43, B62 + "-_")
SECRETS.append(("keyfile-jwk", json.dumps({"kty": "OKP", "crv": "Ed25519", "x": rand(43, B62 + "-_"), "d": d}), [d]))
k = rand(43, B62 + "-_")
SECRETS.append(("keyfile-jwk", json.dumps({"keys": [{"kty": "oct", "kid": "hmac", "k": k, "alg": "HS256"}]}), [k]))
add("keyfile-age", "# created: 2026-01-01\n# public key: age1{0}\n{1}",
    rand(58, string.ascii_lowercase + string.digits),
    "AGE-SECRET-KEY-1" + rand(58, UP))
SECRETS[-1] = (SECRETS[-1][0], SECRETS[-1][1], SECRETS[-1][2][1:])  # the public key may stay
p12 = base64.b64encode(bytes([0x30, 0x82, 0x0A, 0x1B, 0x02, 0x01, 0x03, 0x30, 0x82, 0x09, 0xE1]) + bytes(
    _rng.getrandbits(8) for _ in range(600))).decode()
add("keyfile-pkcs12", "CERT_P12_BASE64={0}", p12)
add("keyfile-pkcs12", "{0}", p12)
pk8 = base64.b64encode(bytes([0x30, 0x82, 0x04, 0xBD, 0x02, 0x01, 0x00, 0x30, 0x0D, 0x06, 0x09]) + bytes(
    _rng.getrandbits(8) for _ in range(600))).decode()
add("keyfile-der", "signing key (base64 DER): {0}", pk8)
# YAML/TOML inside a code file's string constants, escapes as boundaries
add("embedded-yaml", 'CONFIG = "db:\\n  host: x\\n  password: {0}\\n"', password())
add("embedded-yaml", "DEFAULTS = '[database]\\npassword = \"{0}\"\\nuser = \"app\"'", password())
add("embedded-yaml", 'const cfg = `\napi:\n  token: {0}\n`;', rand(32))
add("embedded-yaml", 'TEMPLATE = """\n[auth]\nclient_secret = "{0}"\n"""', rand(32))
add("escaped", 'old_string: "x = 1\\n{0}\\n"', "ghp_" + rand(36))
add("escaped", '"line one\\n{0}"', "sk-ant-api03-" + rand(80, B62 + "-_"))
add("escaped", '"\\t{0}"', "AKIA" + rand(16, UP))
add("escaped", 'print("\\napi_key={0}")', rand(32))
add("escaped", 'body = "{{\\"password\\": \\"{0}\\"}}"', password())
add("escaped", 'log("\\r\\ntoken: {0}")',
    "xoxb-" + rand(12, string.digits) + "-" + rand(12, string.digits) + "-" + rand(24))
# DSNs with the key in the user part
add("dsn-user", "SENTRY_DSN=https://{0}@o4504.ingest.us.sentry.io/4506", rand(32, HEX))
add("dsn-user", "dsn: https://{0}@sentry.example.com/1", rand(32, HEX))
add("dsn-user", "Sentry.init({{ dsn: 'https://{0}@o1.ingest.sentry.io/2' }})", rand(32, HEX))
add("dsn-user", "redis://:{0}@cache:6379", password())
add("dsn-user", "amqp://user:{0}@rabbit/", password())
add("dsn-user", "BROKER=https://{0}@hooks.example.com/ingest", rand(40))
add("dsn-user", "git clone https://{0}@github.com/acme/app.git", "ghp_" + rand(36))
add("dsn-user", "https://{0}:@api.example.com/v1", rand(32))
# passwords in XML attributes
add("xml-attr", '<add key="Password" value="{0}"/>', password())
add("xml-attr", "<add key='ApiKey' value='{0}' />", rand(32))
add("xml-attr", '<property name="password" value="{0}"/>', password())
add("xml-attr", '<user name="ci" password="{0}" roles="admin"/>', password())
add("xml-attr", '<server id="nexus"><username>ci</username><password>{0}</password></server>', password())
add("xml-attr", '<entry key="db.password">{0}</entry>', password())
add("xml-attr", '<param name="secret" value="{0}"/>', rand(32))
add("xml-attr", '<connectionStrings><add name="Db" connectionString="Server=db;User ID=sa;Password={0};"/>', password())
# YAML / TOML / INI / properties fields
add("field", "spring.datasource.password={0}", password())
add("field", "db:\n  password: \"{0}\"", password())
add("field", "[server]\nsecret_key = \"{0}\"", rand(40))
add("field", "  - name: API_TOKEN\n    value: {0}", rand(32))
add("field", "  - name: DB_PASSWORD\n    value: \"{0}\"", password())
add("field", "{{\"name\": \"DB_PASSWORD\", \"value\": \"{0}\"}}", password())
add("field", "Parameters:\n  DBPassword:\n    Default: {0}", password())
add("field", "variable \"db_password\" {{\n  default = \"{0}\"\n}}", password())

# --- ordinary text that must not be redacted -----------------------------------------------------------
ORDINARY: list[str] = [
    *(f"commit {rand(40, HEX)}" for _ in range(10)),
    *(f"git checkout {rand(40, HEX)[:12]} -- src/app.py" for _ in range(5)),
    *(f"request id {_rng.getrandbits(32):08x}-{_rng.getrandbits(16):04x}-4{_rng.getrandbits(12):03x}-"
      f"a{_rng.getrandbits(12):03x}-{_rng.getrandbits(48):012x}" for _ in range(10)),
    *(f"sha256: {rand(64, HEX)}" for _ in range(5)),
    *(f'<img src="data:image/png;base64,{base64.b64encode(bytes(_rng.getrandbits(8) for _ in range(300))).decode()}">'
      for _ in range(5)),
    *(f"![chart](data:image/jpeg;base64,{base64.b64encode(bytes(_rng.getrandbits(8) for _ in range(600))).decode()})"
      for _ in range(3)),
    "tests/test_auth.py::test_password_reset_sends_email PASSED",
    "tests/test_auth.py::test_login_with_wrong_password FAILED",
    "test_password_hashing: ok", "test_token_refresh_rotates_the_secret ... ok",
    "FAILED tests/test_secrets.py::test_api_key_is_masked - AssertionError",
    "def test_change_password_requires_the_old_one(client): ...",
    "https://github.com/acme/shop/pull/42", "https://docs.python.org/3/library/secrets.html",
    "https://example.com/reset-password?step=2", "http://localhost:8080/api/v1/tokens",
    "ssh git@github.com:acme/shop.git",
    "https://registry.npmjs.org/@types%2fnode", "postgres://localhost/shop", "redis://cache:6379/0",
    "https://user@example.com/path", "http://127.0.0.1:5000/login?next=/account",
    "token = get_token()", 'password = request.form["password"]', "password = os.environ.get('DB_PASSWORD')",
    "password = os.environ['DB_PASSWORD']", "api_key = settings.API_KEY", "secret = self.secret",
    "self.password = password", "user.set_password(new_password)", "if not check_password(password, user.hash):",
    "def authenticate(username: str, password: str) -> bool:", "password: str", "token: Optional[str] = None",
    "apiKey: string;", "const token = await getToken();", "password=${DB_PASSWORD}", "PASSWORD=$PGPASSWORD",
    "api_key: ${{ secrets.API_KEY }}", "token: {{ .Values.token }}", "password: <your-password>",
    "PASSWORD=********", "password: null", "password=", "secretName: tls-cert", "token_type: bearer",
    "max_tokens: 200000", "key_id: 7", "sort_key = \"created_at\"", "primary_key=True", "cache_key = f\"user:{uid}\"",
    "the password field is required", "Reset your password: click the link in the email",
    "The password is incorrect", "the token is expired", "Your password was changed", "the key is to keep it simple",
    "my password is not working", "the secret is out", "Bearer tokens are described in RFC 6750",
    "Basic authentication is disabled", "token limit reached", "tokenizer.encode(text)", "author = \"Jonathan\"",
    "keyboard: us", "monkey: patched", "OLDPWD=/home/dev/shop", "PWD=/home/dev/shop", "bypass: true",
    "mysql -u root -p shop", "mysql -h db -P 3306 -u app -p", "psql -h db -U app --password", "sshpass -f ~/.pw ssh x",
    "docker login --password-stdin ghcr.io", "echo hello | base64", "pytest -q -k password",
    "grep -rn password src/", "git log --grep=token", "curl -u \"$USER:$PASS\" https://x", "pip install keyring",
    "const KEY_ENTER = 13;", "KEY_ESCAPE = 27", "ssh-keygen -t ed25519 -C dev@example.com",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIBkTCB+wIJAKHHIG\n-----END CERTIFICATE-----",
    "private key files must be mode 0600", "see docs/security/private-keys.md", "AKIA is the prefix of AWS key ids",
    "skip the sk- prefix check", "the ghp_ prefix marks GitHub tokens", "task-runner sk-learn", "disk-usage --human",
    "xoxo", "Authorization header missing", "Set-Cookie header is ignored", "machine learning model",
    "login: you must sign in first", "credentials: 'include'", "credentials: 'same-origin'",
    "SELECT * FROM users WHERE password_hash IS NULL", "UPDATE users SET token = NULL",
    "for key, value in settings.items():", "if key == 'password': continue", "hash = hashlib.sha256(data).hexdigest()",
    "Processed 1,024 tokens in 3.2 s", "export PATH=$HOME/.local/bin:$PATH", "FOO=bar BAZ=qux make test",
    "LOG_LEVEL=debug", "uuid4(): 3f2a9c1d-8e7b-4a5f-9e3d-2c1b0a9f8e7d", "version: 1.2.3", "sig: int = 0",
    "signal.signal(signal.SIGTERM, handler)", "design: keep the api small", "auth: true", "auth_method: oauth",
    "key: value", "key: name", "token: EOF", "password_min_length = 12", "PASSWORD_RESET_TIMEOUT = 3600",
    "password_file: /run/secrets/db", "token_url: https://oauth2.googleapis.com/token",
    "client_id: 1234567890-abc.apps.googleusercontent.com", "cmd /p:foo",
    "image: postgres:16 # password via POSTGRES_PASSWORD_FILE", "the session ended", "3 passed, 1 skipped in 0.42s",
    # found by running the filter over this repository's own code and docs
    '_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"', '{"_meta": {_SUBSCRIPTION_KEY: rid}}',
    "if pw is None:", "if password is None:", "Used in `auto` mode when a key is set: with a budget",
    "token_count = count_tokens(text)", "f(api_key=api_key)",
    # ... and over the recorded Claude Code transcripts in ../shared/data
    "const STORAGE_KEY = 'todos';", "SESSION_KEY = 'user'",
    '_SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"',
    # issue 25: code and configuration the filter mangled
    "curl https://[::ffff:10.0.0.1]:8080/health", "http://[2001:db8::1]:80/", "ssh://[fe80::1%eth0]:22",
    "credentials: _ProviderT", "token: str = field(default='')", "password: Optional[str] = None",
    "api_key: str | None = None", "secret: SecretStr", "auth_token: Final = os.environ['AUTH_TOKEN']",
    "def login(self, password: str, *, otp: str | None = None) -> Session:",
    "permissions:\n  contents: read\n  id-token: write", "id-token: write", "ID_TOKEN_AUDIENCE: sts.amazonaws.com",
    "the row identified by 'name' is kept", "a session identified by 'sid' in the cookie",
    "token=${TOKEN}", "password=<your-password>", "api_key: <your-api-key>", "API_KEY=os.environ['API_KEY']",
    "token = None", "auth: true", "secret=true", "PASSWORD_REQUIRED=false", "key=value",
    "const apiKey = process.env.API_KEY;", 'define("AUTH_SALT", getenv("AUTH_SALT"));',
    '#define KEY_UP "up"', "#define TOKEN_MAX 128", "set -x EDITOR vim", 'headers.put("Content-Type", "json");',
    'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "app.settings")', '_("password", "Your password")',
    '<add key="ClientValidationEnabled" value="true" />', '<property name="passwordEncoder" ref="encoder"/>',
    '{"name": "token", "value": "${TOKEN}"}', "  - name: API_TOKEN\n    valueFrom:\n      secretKeyRef:",
    "Parameters:\n  DBPassword:\n    Type: String\n    NoEcho: true",
    "https://user@example.com/x", "git@github.com:acme/app.git", "mailto:dev@example.com",
    'log.info("done\\nnext step: rotate the token")', 'print("a\\tb\\nc")',
    "MTIzNDU2Nzg5MDEyMzQ1Njc4.is not a token", "the node server listens on 8080",
]
